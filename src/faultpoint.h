/*
 * faultpoint.h: named crash points for the fault-injection suite
 * (scripts/chaos).  Built with ./configure --enable-fault-injection,
 * faultpoint("after_claim_commit") kills the process with SIGKILL when
 * CRONGUARD_FAULT is exactly that name; otherwise it compiles to nothing.
 * The points: after_claim_commit (src/outbox.c: a claim of at least one
 * row committed), after_send (src/dispatch.c: one message of the batch
 * sent, others maybe in flight, nothing finalised), before_finalise (the
 * batch was sent, nothing finalised) and mid_finalise (sent rows deleted
 * when keep_sent = false, the UPDATE of the others not yet run).
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
