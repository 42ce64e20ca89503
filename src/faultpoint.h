/*
 * faultpoint.h: named crash points for the fault-injection suite
 * (scripts/chaos).  Built with ./configure --enable-fault-injection,
 * faultpoint("after_claim_commit") kills the process with SIGKILL when
 * CRONGUARD_FAULT is exactly that name; otherwise it compiles to nothing.
 * The points: after_claim_commit (src/outbox.c: a claim of at least one
 * row committed), after_send (src/dispatch.c: one message of the batch
 * sent, others maybe in flight, nothing finalised), before_finalise (the
 * batch was sent, nothing finalised) and mid_finalise (statement by
 * statement: sent rows deleted when keep_sent = false, the UPDATE of the
 * others not yet run; with the attempt log, just before the CALL of
 * cronguard_finalise).  db.c has two more, which lose a reply instead of
 * killing: commit_lost, commit_lost_before (the first COMMIT) and
 * call_lost (the first db_call_checked statement).
 */
#ifndef CG_FAULTPOINT_H
#define CG_FAULTPOINT_H

#ifdef ENABLE_FAULT_INJECTION
void faultpoint_hit(const char *name);
#define faultpoint(name) faultpoint_hit(name)
#else
#define faultpoint(name) ((void)0)
#endif

#endif
