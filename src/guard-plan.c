/* guard-plan.c: which slots of its schedule a launch runs: the latest,
 * catch-up and backfill, or run --slot's (cronguard.conf(5), "Schedules").
 * No database: the slot state comes in (runs_slot_state). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "exitcode.h"
#include "guard-int.h"
#include "log.h"
#include "schedule.h"

/* The zone of gj's slots (runs_slot_zone), or -1 having logged why. */
int
guard_zone(
    const struct guard_job *gj, const struct slot_state *st, struct tzone **z)
{
	char *errstr = NULL;

	if (runs_slot_zone(gj->timezone, st, z, &errstr) == 0)
		return 0;
	log_kv(LOG_ERROR, "config_error", "job", gj->job, "key", "timezone",
	    "msg",
	    gj->timezone != NULL
	        ? errstr
	        : "cannot tell the database server's time zone: set timezone",
	    "error", errstr);
	free(errstr);
	return -1;
}

/* Log a skip for a paused job; the pause is st's. */
void
guard_paused(const struct guard_job *gj, const struct slot_state *st)
{
	log_kv(LOG_INFO, "job_paused", "job", gj->job, "paused_by",
	    st->paused_by, "since", st->paused_at, "until",
	    st->until != NULL ? st->until : "resumed", "reason", st->reason,
	    "all", strcmp(st->pause_job, "*") == 0 ? "yes" : "no");
}

/* run --slot's slot, which must be one of the schedule's, and past: -1
 * with it in plan[0], else EXIT_USAGE. */
static int
guard_plan_manual(const struct guard_job *gj, const struct tzone *z,
    int64_t now, struct guard_slot *plan, size_t *n)
{
	char    text[TZONE_RFC3339_MAX], *errstr = NULL;
	int64_t t;

	if (tzone_parse(z, gj->slot_arg, &t, &errstr) != 0) {
		log_kv(LOG_ERROR, "usage_error", "job", gj->job, "slot",
		    gj->slot_arg, "msg", errstr);
		free(errstr);
		return EXIT_USAGE;
	}
	tzone_format(z, t, text, sizeof text);
	if (!schedule_contains(gj->schedule, z, t) || t > now) {
		log_kv(LOG_ERROR, "usage_error", "job", gj->job, "slot", text,
		    "msg",
		    t > now ? "the slot is in the future"
		            : "the schedule has no such slot");
		return EXIT_USAGE;
	}
	plan[0].t = t;
	plan[0].kind = "manual";
	*n = 1;
	return -1;
}

/* catch_up = "all": the slots before latest (plan[0], *n 1) that have no
 * success yet are added, and plan put oldest first. */
static void
guard_plan_backfill(const struct guard_job *gj, const struct slot_state *st,
    const struct tzone *z, int64_t latest, struct guard_slot *plan, size_t *n)
{
	char    other[TZONE_RFC3339_MAX];
	int64_t t, from;
	size_t  k, max;

	/* Every slot since the last success, never one before the job's
	 * first run or the end of its latest pause, newest backfill_limit of
	 * them, oldest first. */
	from = st->last_success > st->first_run - 1 ? st->last_success
	                                            : st->first_run - 1;
	/* Nor one of a pause, or before it: after jobs resume, only the
	 * operator's run --slot runs those. */
	if (st->pause_ended > from)
		from = st->pause_ended;
	max = gj->backfill_limit > 0 ? gj->backfill_limit : 1;
	t = latest;
	while (*n < max && schedule_prev(gj->schedule, z, t - 1, &t) == 0 &&
	    t > from) {
		plan[*n].t = t;
		plan[*n].kind = "catch_up";
		(*n)++;
	}
	if (*n == max &&
	    schedule_prev(gj->schedule, z, plan[*n - 1].t - 1, &t) == 0 &&
	    t > from) {
		tzone_format(z, t, other, sizeof other);
		log_kv(LOG_WARN, "job_slots_skipped", "job", gj->job, "newest",
		    other, "msg",
		    "older slots without a success are beyond backfill_limit:"
		    " not run (run them with run --slot)");
	}
	for (k = 0; k < *n / 2; k++) {
		struct guard_slot tmp = plan[k];

		plan[k] = plan[*n - 1 - k];
		plan[*n - 1 - k] = tmp;
	}
}

/*
 * Which slots this launch runs, oldest first, into plan (at most
 * backfill_limit, or 1): -1 with *n set to run them, else the exit code
 * (0: nothing is due; 64: a bad --slot; 78: a schedule that never
 * matches).  cronguard.conf(5), "Schedules", states the rules.
 */
int
guard_plan(const struct guard_job *gj, const struct slot_state *st,
    const struct tzone *z, struct guard_slot *plan, size_t *n)
{
	int64_t now = st->now_us / 1000000, latest;
	char    text[TZONE_RFC3339_MAX];

	*n = 0;
	if (gj->slot_arg != NULL)
		return guard_plan_manual(gj, z, now, plan, n);
	if (schedule_prev(gj->schedule, z, now, &latest) != 0) {
		log_kv(LOG_ERROR, "config_error", "job", gj->job, "key",
		    "schedule", "msg", "the schedule has no slot before now");
		return EXIT_CONFIG;
	}
	tzone_format(z, latest, text, sizeof text);
	if (st->last_success >= latest) {
		log_kv(
		    LOG_INFO, "job_already_done", "job", gj->job, "slot", text);
		return EXIT_OK;
	}
	if (gj->catch_up == CATCH_UP_NONE &&
	    (now - latest) * 1000 > gj->starting_deadline_ms) {
		log_kv(LOG_INFO, "job_slot_skipped", "job", gj->job, "slot",
		    text, "msg",
		    "launched after starting_deadline (catch_up = \"none\")");
		return EXIT_OK;
	}
	plan[0].t = latest;
	plan[0].kind = "schedule";
	*n = 1;
	if (gj->catch_up == CATCH_UP_ALL && st->first_run >= 0)
		guard_plan_backfill(gj, st, z, latest, plan, n);
	return -1;
}
