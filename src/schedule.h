/*
 * schedule.h: cron(5) schedules and the time zones they are evaluated in
 * (cronguard.conf(5), "Schedules").
 *
 * An expression has five fields (minute hour day-of-month month
 * day-of-week) with lists, ranges, steps, month and day names and 7 as
 * Sunday; a restricted day of month and day of week match when either
 * does; or it is one of the macros @yearly @annually @monthly @weekly
 * @daily @midnight @hourly.
 *
 * Beyond cron(5), where users of cron libraries ask for them: "L" in
 * day-of-month (the month's last day), and in day-of-week "NL" (the last
 * weekday N of the month, "5L", "friL") and "N#K" (the K-th weekday N,
 * K 1-5, "1#2").  Each is one element of a list ("1,L", "1#1,5L"), never
 * part of a range or step; they are restricted day fields like any
 * value.  Everything else beyond cron(5) (W, ?, L-3, LW) is refused.
 *
 * Instants are Unix seconds (int64_t).  A local time is mapped to an
 * instant so that the map only grows: a local time that does not exist
 * (spring forward) is the first instant after the gap; a local time that
 * occurs twice (fall back) is its first occurrence.  So a slot is never
 * run twice and never skipped because of a transition.
 *
 * Nothing here reads a clock: "now" is the caller's (the database's).
 *
 * Without the extensions, the syntax is what Debian's cron accepts, so
 * that `jobs crontab` can hand such an expression to cron unchanged: a step
 * follows a range or "*"
 * ("5/15" is an error, as in cron); names are three letters, any case;
 * macros are lower case.  A day field is restricted unless it starts
 * with '*' (Vixie cron's rule: a stepped "*" is not restricted, so it
 * combines with the other day field by AND).
 *
 * Named zones are read with TZ set to ":Area/City" around each call and
 * restored after it: TZ is process-wide, so these functions must not run
 * in two threads at once (cronguard evaluates schedules from one thread).
 */
#ifndef CRONGUARD_SCHEDULE_H
#define CRONGUARD_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

struct schedule;
struct tzone;

/* Parse expr (leading and trailing blanks ignored).  0 and *out
 * (schedule_free), or -1 with *errstr (allocated) naming the field and
 * what is wrong ("day-of-week: 8 is out of range 0-7"), the field count,
 * or the macro ("unknown macro", "@reboot has no slots").  An expression
 * that can never match ("0 0 30 2 *") is refused here, naming
 * day-of-month, so that a parsed schedule always has slots. */
int  schedule_parse(const char *expr, struct schedule **out, char **errstr);
void schedule_free(struct schedule *);
/* The expression as given (for jobs list, jobs crontab). */
const char *schedule_text(const struct schedule *);
/* An expression cron(5) reads whose times include every slot: the text
 * itself, or with the extensions widened to the days they pick from
 * ("L" as 28-31, "5L" and "1#2" as 5 and 1), so that a launch it adds is
 * no slot (for jobs crontab). */
const char *schedule_cron_text(const struct schedule *);

/*
 * A zone: an IANA name from the host's time-zone database (tzdata:
 * "Europe/Berlin", "Etc/UTC"), or a fixed offset "+09:00" / "-05:30"
 * (at most 18:00), "UTC" or "Z" (no tables needed).  A name must be a
 * TZif file under $TZDIR, else /usr/share/zoneinfo, where glibc reads
 * it: an unknown zone is an error, never silently UTC.  0 and *out
 * (tzone_free), or -1 with *errstr (allocated).
 */
int tzone_open(const char *name, struct tzone **out, char **errstr);
/*
 * The database server's zone, for a job without timezone: zone is its
 * @@global.time_zone, or (system != 0) the @@system_time_zone that its
 * SYSTEM stands for.  That is only the abbreviation the C library gives
 * the server host's zone ("EST", "CET", "GMT"), which names no daylight-
 * saving rules (tzdata's EST is UTC-05:00 all year, where New York's is
 * not), so it is never guessed: only "UTC" or an Area/City name is taken,
 * any other is -1 with *errstr naming the fix (timezone on the job, or
 * the server's time_zone).  0 and *out, or -1 with *errstr (allocated).
 */
int tzone_open_server(
    const char *zone, int system, struct tzone **out, char **errstr);
/* The host's zone, as cron reads it: $TZ when set (a zone name, as
 * above), else the zone /etc/localtime links to under a zoneinfo
 * directory, else UTC when there is no /etc/localtime.  0 and *out, or
 * -1 with *errstr (a POSIX TZ rule such as "CET-1CEST" is refused). */
int         tzone_open_host(struct tzone **out, char **errstr);
void        tzone_free(struct tzone *);
const char *tzone_name(const struct tzone *);

/* The latest slot at or before t: 0 and *slot, or -1 when t is outside
 * years 31 to 9999 (a parsed schedule matches within every 28 years). */
int schedule_prev(
    const struct schedule *, const struct tzone *, int64_t t, int64_t *slot);
/* The earliest slot after t (strictly): 0 and *slot, or -1. */
int schedule_next(
    const struct schedule *, const struct tzone *, int64_t t, int64_t *slot);
/* Up to n slots after t (strictly), earliest first, into slots[]:
 * returns how many (fewer than n only at the end of year 9999). */
size_t schedule_upcoming(const struct schedule *, const struct tzone *,
    int64_t t, int64_t *slots, size_t n);
/* Whether instant t is one of the schedule's slots: 1 or 0. */
int schedule_contains(const struct schedule *, const struct tzone *, int64_t t);

/*
 * A zone held in effect for many calls in a row.  Each schedule_* and
 * tzone_format call for a named zone sets TZ for itself and restores it,
 * and glibc reads the zone's file again whenever TZ changes (tzset): at
 * 1,000 jobs that was nine tenths of jobs check.  While a zone is held,
 * calls for it change nothing.  h = tzone_hold(h, z) before each job's
 * calls (it keeps the zone held when it is z's, else switches, from NULL
 * at first), tzone_release(h) after the last: TZ is as it was.
 * Nothing in cronguard but these calls reads TZ (logs are in UTC).
 */
struct tzone_held;
struct tzone_held *tzone_hold(struct tzone_held *, const struct tzone *);
void               tzone_release(struct tzone_held *);

/* RFC 3339 with the zone's offset at t, "2026-12-01T01:30:00+01:00"
 * ("Z" never: the offset is always written; an offset with seconds, as
 * local mean time before 1900, is cut to minutes).  buf of
 * TZONE_RFC3339_MAX. */
#define TZONE_RFC3339_MAX 32
void tzone_format(const struct tzone *, int64_t t, char *buf, size_t len);
/* UTC seconds t as the run records hold a slot, "2026-12-01 00:30:00",
 * into buf of len (at least TZONE_UTC_MAX); buf. */
#define TZONE_UTC_MAX 20
const char *tzone_utc(int64_t t, char *buf, size_t len);

/*
 * The schedule as systemd.time(7) calendar events, for OnCalendar=: one,
 * or two when a restricted day of month and day of week match by OR (a
 * timer with two OnCalendar= lines fires on either), each followed by
 * zone when it is not NULL.  Returns the count with out[] allocated
 * (the caller frees each), or 0 with *why (static) when systemd cannot
 * name the zone (a fixed offset other than UTC).  An extension is
 * written as the days it picks from, as in schedule_cron_text.
 */
int schedule_calendar(
    const struct schedule *, const char *zone, char *out[2], const char **why);

/*
 * The cron(5) lines, "m h dom mon dow", that launch schedule s of zone z
 * at each of its slots from instant from for a year, on a host whose
 * clock (cron's) is in zone host: one line per difference between the
 * two zones' offsets in that year, and for a local time in one of z's
 * gaps a line at the instant the gap ends (on the transition's weekday
 * of its month).  A line may launch where there is no slot: the slot
 * check makes that launch a no-op.  When a line's days had to be widened
 * (a restricted day field shifted across midnight, the gap lines),
 * *covered is 1.  Up to max lines into lines[] (the caller frees each);
 * returns how many, 0 when the two zones' offsets agree all year (then
 * the schedule's own line is right).  The host's own transitions are
 * cron's business.
 */
#define SCHEDULE_CRON_LINES_MAX 16
size_t schedule_cron_lines(const struct schedule *s, const struct tzone *z,
    const struct tzone *host, int64_t from, char **lines, size_t max,
    int *covered);

/* Parse an operator's time in zone z: RFC 3339 with an offset or Z
 * ("2026-12-01T01:30:00+01:00"), or a local "YYYY-MM-DD HH:MM[:SS]" /
 * "YYYY-MM-DDTHH:MM[:SS]" in z (mapped as above).  0 and *t, or -1 with
 * *errstr naming the accepted forms. */
int tzone_parse(
    const struct tzone *z, const char *text, int64_t *t, char **errstr);

/* The earliest and latest instant an operator may give (--at, --slot):
 * what the database stores as a point in time (FROM_UNIXTIME, TIMESTAMP:
 * 1970-01-01T00:00:00Z to 2038-01-19T03:14:07Z). */
#define TZONE_INSTANT_MIN 0
#define TZONE_INSTANT_MAX 2147483647
/* tzone_parse, and the instant within TZONE_INSTANT_MIN..MAX: the one
 * validator of an operator's time.  0 and *t, or -1 with *errstr. */
int tzone_parse_instant(
    const struct tzone *z, const char *text, int64_t *t, char **errstr);

#endif
