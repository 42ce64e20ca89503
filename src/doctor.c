/* doctor.c: the preflight checks of "cronguard doctor" (doctor.h).  Every
 * check appends one result; none prints. */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>
#include <mysqld_error.h>

#include "channel-amqp.h"
#include "curlutil.h"
#include "doctor.h"
#include "migrate.h"
#include "outbox-admin.h"
#include "outbox.h"
#include "output.h"
#include "runs.h"
#include "schedule.h"
#include "util.h"

/* A clock difference above this is a WARNING. */
#define DOCTOR_CLOCK_WARN_MS 2000
/* The longest a channel's TCP connect may take. */
#define DOCTOR_CONNECT_MS 3000

/* Where the writes must go: the fix of role, and of the checks a
 * read-only server refuses. */
#define DOCTOR_ROLE_FIX \
	"point database.host at the writable primary (its address, VIP or " \
	"proxy), not a replica: see cronguard(1), REPLICATION AND FAILOVER"

static void doctor_add(struct doctor_report *, enum check_status,
    const char *name, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void
doctor_add(struct doctor_report *r, enum check_status st, const char *name,
    const char *fix, const char *fmt, ...)
{
	struct doctor_result *d;
	va_list               ap;

	r->v = xreallocarray(r->v, r->n + 1, sizeof *r->v);
	d = &r->v[r->n++];
	d->status = st;
	d->name = xstrdup(name);
	va_start(ap, fmt);
	d->finding = xvasprintf(fmt, ap);
	va_end(ap);
	d->fix = st != CHECK_OK && fix != NULL ? xstrdup(fix) : NULL;
	r->worst = check_status_worst(r->worst, st);
}

/* The leading "N" of s as a number (at most 5 digits); *end after it. */
static int
doctor_number(const char *s, const char **end)
{
	int n = 0, k;

	for (k = 0; k < 5 && s[k] >= '0' && s[k] <= '9'; k++)
		n = n * 10 + (s[k] - '0');
	*end = s + k;
	return k == 0 ? -1 : n;
}

/* Flavour and version from VERSION(); SKIP LOCKED from MariaDB 10.6 and
 * MySQL 8.0.  Returns 1 when SKIP LOCKED is supported. */
static int
doctor_server(struct db *db, struct doctor_report *r)
{
	const char *flavour, *p;
	char       *version = NULL, *errstr = NULL;
	int         major, minor = -1, ok = 0;

	if (db_query_value(db, &version, &errstr, "SELECT VERSION()") !=
	        DB_OK ||
	    version == NULL) {
		doctor_add(r, CHECK_CRITICAL, "server",
		    "check the database user can run SELECT VERSION()",
		    "SELECT VERSION(): %s", errstr != NULL ? errstr : "NULL");
		goto out;
	}
	flavour = strstr(version, "MariaDB") != NULL ? "MariaDB" : "MySQL";
	major = doctor_number(version, &p);
	if (major >= 0 && *p == '.')
		minor = doctor_number(p + 1, &p);
	if (major < 0 || minor < 0) {
		doctor_add(r, CHECK_WARNING, "server",
		    "use MariaDB >= 10.6 or MySQL >= 8.0",
		    "cannot read the version in \"%s\"", version);
		goto out;
	}
	doctor_add(r, CHECK_OK, "server", NULL, "%s %s", flavour, version);
	if (strcmp(flavour, "MariaDB") == 0)
		ok = major > 10 || (major == 10 && minor >= 6);
	else
		ok = major >= 8;
	if (ok)
		doctor_add(r, CHECK_OK, "skip_locked", NULL,
		    "%s %d.%d supports SELECT ... FOR UPDATE SKIP LOCKED",
		    flavour, major, minor);
	else
		doctor_add(r, CHECK_CRITICAL, "skip_locked",
		    "upgrade to MariaDB >= 10.6 or MySQL >= 8.0",
		    "%s %d.%d has no SKIP LOCKED: outbox dispatchers cannot claim",
		    flavour, major, minor);
out:
	free(version);
	free(errstr);
	return ok;
}

/* The column named name of r, or (size_t)-1. */
static size_t
doctor_column(const struct db_result *r, const char *name)
{
	size_t j;

	for (j = 0; j < r->ncols; j++)
		if (strcmp(r->names[j], name) == 0)
			return j;
	return (size_t)-1;
}

/* The key, type and Extra of an EXPLAIN's first row (res): NULL for
 * each it lacks, all NULL without a row. */
static void
doctor_explain_first(const struct db_result *res, const char **key,
    const char **type, const char **extra)
{
	*key = *type = *extra = NULL;
	if (res->nrows == 0)
		return;
	*key = db_cell(res, 0, doctor_column(res, "key"));
	*type = db_cell(res, 0, doctor_column(res, "type"));
	*extra = db_cell(res, 0, doctor_column(res, "Extra"));
}

/* The per-key ordering subqueries of a claim's EXPLAIN (res), those on
 * outbox_messages: each must be a dive into an ordering index (sql/005,
 * sql/011), never a sort or a walk over a key's rows by status.  0 when
 * they are (*n of them), else -1 with *why allocated. */
static int
doctor_claim_subqueries(const struct db_result *res, size_t *n, char **why)
{
	const char *sel, *key, *extra, *table;
	size_t      i;

	*n = 0;
	for (i = 0; i < res->nrows; i++) {
		sel = db_cell(res, i, doctor_column(res, "select_type"));
		table = db_cell(res, i, doctor_column(res, "table"));
		if (sel == NULL || strcmp(sel, "DEPENDENT SUBQUERY") != 0 ||
		    table == NULL ||
		    strcmp(table, "cronguard_channel_pauses") == 0)
			continue;
		(*n)++;
		key = db_cell(res, i, doctor_column(res, "key"));
		extra = db_cell(res, i, doctor_column(res, "Extra"));
		if (key == NULL ||
		    strncmp(key, "ix_outbox_ordering",
		        sizeof "ix_outbox_ordering" - 1) != 0) {
			*why = xasprintf("on %s uses key %s, not an ordering "
			                 "index",
			    table, key != NULL ? key : "NULL");
			return -1;
		}
		if (extra != NULL && strstr(extra, "filesort") != NULL) {
			*why = xasprintf("on %s sorts (%s)", table, extra);
			return -1;
		}
	}
	return 0;
}

/* The claim (outbox_claim_sql, the statement the dispatcher runs, for
 * the configured channels) must range over ix_outbox_due: a filesort or
 * a full scan makes SKIP LOCKED lock every candidate row. */
static void
doctor_claim_index(
    struct db *db, const struct conf *c, int read_only, struct doctor_report *r)
{
	static const char *const fix =
	    "cronguard db migrate (sql/002_outbox.sql creates ix_outbox_due (status, next_attempt_at))";
	struct db_result *res = NULL;
	struct buf        sql;
	const char       *key = NULL, *type = NULL, *extra = NULL;
	const char      **names;
	char             *errstr = NULL, *bad = NULL;
	size_t            i, nsub = 0;

	buf_init(&sql);
	names = xcalloc(c->nchannels + 1, sizeof *names);
	for (i = 0; i < c->nchannels; i++)
		names[i] = c->channels[i].name;
	if (outbox_claim_sql(db, &c->outbox, names, c->nchannels,
	        c->outbox.batch_size, NULL, &sql, &errstr) != 0 ||
	    db_query(db, &res, &errstr, "EXPLAIN %F", &sql) != DB_OK) {
		/* The claim is a locking read: a read-only server refuses
		 * it, its EXPLAIN too (ER_OPTION_PREVENTS_STATEMENT). */
		if (read_only || db_errno(db) == ER_OPTION_PREVENTS_STATEMENT)
			doctor_add(r, CHECK_CRITICAL, "claim_index",
			    DOCTOR_ROLE_FIX,
			    "not checked: the server takes no writes from this "
			    "user, and the claim (SELECT ... FOR UPDATE SKIP "
			    "LOCKED) is refused here (%s); outbox dispatch "
			    "exits 69 on it",
			    errstr);
		else
			doctor_add(r, CHECK_CRITICAL, "claim_index", fix,
			    "EXPLAIN of the claim failed: %s", errstr);
		goto out;
	}
	doctor_explain_first(res, &key, &type, &extra);
	if (key == NULL || strcmp(key, "ix_outbox_due") != 0 ||
	    (type != NULL && strcmp(type, "ALL") == 0))
		doctor_add(r, CHECK_CRITICAL, "claim_index", fix,
		    "the claim uses key %s (type %s), not ix_outbox_due",
		    key != NULL ? key : "NULL", type != NULL ? type : "NULL");
	else if (extra != NULL && strstr(extra, "filesort") != NULL)
		doctor_add(r, CHECK_WARNING, "claim_index", fix,
		    "the claim on ix_outbox_due sorts (%s)", extra);
	else if (doctor_claim_subqueries(res, &nsub, &bad) != 0)
		doctor_add(r, CHECK_WARNING, "claim_index", fix,
		    "an ordering subquery of the claim %s", bad);
	else
		doctor_add(r, CHECK_OK, "claim_index", NULL,
		    "the claim ranges over ix_outbox_due (type %s); its %zu "
		    "ordering subqueries are dives into the ordering index",
		    type != NULL ? type : "NULL", nsub);
out:
	db_result_free(res);
	buf_free(&sql);
	free(names);
	free(errstr);
	free(bad);
}

/* The newest finished run of a job (RUNS_DONE_OF, jobs check and jobs
 * list) must read one entry of ix_runs_job_done, backwards: without it
 * the server reads every finished run of the job, or sorts them. */
static void
doctor_runs_index(struct db *db, const struct conf *c, struct doctor_report *r)
{
	static const char *const fix =
	    "cronguard db migrate (sql/013_runs_done.sql creates ix_runs_job_done (job, done, id))";
	struct db_result *res = NULL;
	const char       *key = NULL, *type = NULL, *extra = NULL;
	char             *errstr = NULL;

	if (db_query(db, &res, &errstr, "EXPLAIN " RUNS_DONE_OF("%s"),
	        c->njobs > 0 ? c->jobs[0].name : "") != DB_OK) {
		doctor_add(r, CHECK_WARNING, "runs_index", fix,
		    "EXPLAIN of the newest finished run failed: %s", errstr);
		goto out;
	}
	doctor_explain_first(res, &key, &type, &extra);
	if (key != NULL && strcmp(key, "ix_runs_job_done") == 0 &&
	    (extra == NULL || strstr(extra, "filesort") == NULL))
		doctor_add(r, CHECK_OK, "runs_index", NULL,
		    "the newest finished run of a job is one entry of "
		    "ix_runs_job_done (type %s)",
		    type != NULL ? type : "NULL");
	else
		doctor_add(r, CHECK_WARNING, "runs_index", fix,
		    "the newest finished run of a job reads key %s (type %s%s%s),"
		    " not one entry of ix_runs_job_done",
		    key != NULL ? key : "NULL", type != NULL ? type : "NULL",
		    extra != NULL ? ", " : "", extra != NULL ? extra : "");
out:
	db_result_free(res);
	free(errstr);
}

/* One EXPLAINed statement of doctor_history_index: 1 when its first
 * table reads ix_outbox_phase_sent without a sort, 0 with *what saying
 * how it reads, -1 with *what the EXPLAIN's error (allocated). */
static int
doctor_history_uses(struct db *db, const struct buf *sql, char **what)
{
	struct db_result *res = NULL;
	const char       *key = NULL, *type = NULL, *extra = NULL;
	char             *errstr = NULL;
	int               ok = 0;

	if (db_query(db, &res, &errstr, "EXPLAIN %F", sql) != DB_OK) {
		*what = errstr;
		errstr = NULL;
		ok = -1;
		goto out;
	}
	doctor_explain_first(res, &key, &type, &extra);
	ok = key != NULL && strcmp(key, "ix_outbox_phase_sent") == 0 &&
	    (extra == NULL || strstr(extra, "filesort") == NULL);
	if (!ok)
		*what = xasprintf("reads key %s (type %s%s%s)",
		    key != NULL ? key : "NULL", type != NULL ? type : "NULL",
		    extra != NULL ? ", " : "", extra != NULL ? extra : "");
out:
	db_result_free(res);
	free(errstr);
	return ok;
}

/* outbox list --status and outbox purge --sent-before (their count and
 * their batches) must find their rows on ix_outbox_phase_sent: without
 * it, they read the whole history of SENT rows. */
static void
doctor_history_index(struct db *db, struct doctor_report *r)
{
	static const char *const fix =
	    "cronguard db migrate (sql/015_outbox_phase_index.sql creates ix_outbox_phase_sent (phase, sent_at, id))";
	struct buf list, where, count;
	char      *errstr = NULL, *why = NULL;
	int        rc;

	buf_init(&list);
	buf_init(&where);
	buf_init(&count);
	if (outbox_list_sql(db, "PENDING", NULL, 50, &list, &errstr) != 0 ||
	    outbox_aged_where(db, "SENT", "sent_at", "2000-01-01 00:00:00",
	        &where, &errstr) != 0 ||
	    db_fragment(db, &count, &errstr,
	        "SELECT COUNT(*) FROM outbox_messages WHERE %F", &where) != 0)
		doctor_add(r, CHECK_WARNING, "history_index", fix,
		    "cannot build the statements: %s", errstr);
	else if ((rc = doctor_history_uses(db, &list, &why)) != 1)
		doctor_add(r, CHECK_WARNING, "history_index", fix,
		    rc < 0
		        ? "EXPLAIN of outbox list --status failed: %s"
		        : "outbox list --status %s, not ix_outbox_phase_sent",
		    why);
	else if ((rc = doctor_history_uses(db, &count, &why)) != 1)
		doctor_add(r, CHECK_WARNING, "history_index", fix,
		    rc < 0
		        ? "EXPLAIN of outbox purge --sent-before failed: %s"
		        : "outbox purge --sent-before %s, not ix_outbox_phase_sent",
		    why);
	else
		doctor_add(r, CHECK_OK, "history_index", NULL,
		    "outbox list --status and outbox purge --sent-before read "
		    "their rows on ix_outbox_phase_sent");
	buf_free(&list);
	buf_free(&where);
	buf_free(&count);
	free(errstr);
	free(why);
}

/* @@session.wait_timeout (as every cronguard session gets it) against each
 * guarded job's heartbeat: the guard pings at least every third of
 * wait_timeout (lock_heartbeat_interval), so a heartbeat that is not below
 * it is not the one that applies. */
static void
doctor_timeouts(struct db *db, const struct conf *c, struct doctor_report *r)
{
	const struct conf_job *j;
	char                  *v = NULL, *errstr = NULL;
	unsigned long long     wait;
	long long              hb;
	const char            *perr;
	size_t                 i, bad = 0;

	if (db_query_value(db, &v, &errstr, "SELECT @@SESSION.wait_timeout") !=
	        DB_OK ||
	    v == NULL || parse_ull(v, 31536000, &wait, &perr) != 0) {
		doctor_add(r, CHECK_WARNING, "wait_timeout", NULL,
		    "cannot read wait_timeout: %s",
		    errstr != NULL ? errstr : "not a number");
		goto out;
	}
	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		if (j->guard != GUARD_NAMED_LOCK && j->guard != GUARD_AUTO)
			continue;
		hb = (j->heartbeat_ms + 999) / 1000;
		if (hb < (long long)wait)
			continue;
		bad++;
		doctor_add(r, CHECK_WARNING, "wait_timeout",
		    "raise wait_timeout above the heartbeat (SET GLOBAL wait_timeout, or the user's option file), or lower the job's heartbeat",
		    "job %s: heartbeat %llds is not below wait_timeout %llus: the guard pings every third of wait_timeout instead",
		    j->name, hb, wait);
	}
	if (bad == 0)
		doctor_add(r, CHECK_OK, "wait_timeout", NULL,
		    "wait_timeout %llus: above every guarded job's heartbeat",
		    wait);
out:
	free(v);
	free(errstr);
}

/* @@max_allowed_packet against each job's output_max: a run record
 * carries at most runs_output_room of it, and a longer output is cut to
 * its newest bytes when the record is written.  And against each
 * channel's max_size: a payload takes a statement of its own size to
 * enqueue, so one near max_allowed_packet is refused by the server
 * before max_size can apply (t1180). */
static void
doctor_packet(struct db *db, const struct conf *c, struct doctor_report *r)
{
	const struct conf_job     *j;
	const struct conf_channel *ch;
	unsigned long long         pkt;
	char                      *errstr = NULL;
	size_t                     i, room, bad = 0;

	if (runs_max_packet(db, &pkt, &errstr) != DB_OK) {
		doctor_add(r, CHECK_WARNING, "max_allowed_packet", NULL,
		    "cannot read max_allowed_packet: %s", errstr);
		goto out;
	}
	room = runs_output_room(pkt);
	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		if (j->command == NULL || j->output == OUTPUT_INHERIT ||
		    (unsigned long long)j->output_max <= room)
			continue;
		bad++;
		doctor_add(r, CHECK_WARNING, "max_allowed_packet",
		    "lower the job's output_max, or raise max_allowed_packet (SET GLOBAL max_allowed_packet, or the server's option file)",
		    "job %s: output_max %lld is above the %zu bytes a run record takes with max_allowed_packet %llu: the newest %zu are kept",
		    j->name, (long long)j->output_max, room, pkt, room);
	}
	for (i = 0; i < c->nchannels; i++) {
		ch = &c->channels[i];
		if ((unsigned long long)ch->max_size < pkt)
			continue;
		bad++;
		doctor_add(r, CHECK_WARNING, "max_allowed_packet",
		    "lower the channel's max_size below max_allowed_packet, or raise max_allowed_packet (SET GLOBAL max_allowed_packet, or the server's option file)",
		    "channel %s: max_size %lld is not below max_allowed_packet %llu: a payload near %llu bytes cannot be enqueued (the server refuses the INSERT: packet too large), so max_size never applies",
		    ch->name, ch->max_size, pkt, pkt);
	}
	if (bad == 0)
		doctor_add(r, CHECK_OK, "max_allowed_packet", NULL,
		    "max_allowed_packet %llu: every job's output_max fits a run record, every channel's max_size a payload",
		    pkt);
out:
	free(errstr);
}

/* @@wsrep_on: on Galera GET_LOCK is local to one node, so a job guarded
 * by guard = "named_lock" can run on two nodes at once. */
static void
doctor_wsrep(struct db *db, const struct conf *c, struct doctor_report *r)
{
	char  *v = NULL, *errstr = NULL;
	size_t i, bad = 0;

	if (db_query_value(db, &v, &errstr, "SELECT @@wsrep_on") != DB_OK) {
		/* MySQL has no such variable: not Galera. */
		doctor_add(
		    r, CHECK_OK, "wsrep", NULL, "no @@wsrep_on: not Galera");
		goto out;
	}
	if (db_parse_bool(v) != 1) {
		doctor_add(r, CHECK_OK, "wsrep", NULL, "@@wsrep_on is %s",
		    v != NULL ? v : "NULL");
		goto out;
	}
	for (i = 0; i < c->njobs; i++) {
		if (c->jobs[i].guard != GUARD_NAMED_LOCK)
			continue;
		bad++;
		doctor_add(r, CHECK_CRITICAL, "wsrep",
		    "set guard = \"lease\" (or \"auto\") for the job",
		    "job %s: guard named_lock on Galera (@@wsrep_on 1): GET_LOCK is node-local",
		    c->jobs[i].name);
	}
	if (bad == 0)
		doctor_add(r, CHECK_OK, "wsrep", NULL,
		    "@@wsrep_on is 1: no job relies on a named lock");
out:
	free(v);
	free(errstr);
}

/* The first of the columns names that r has, or (size_t)-1. */
static size_t
doctor_column_any(const struct db_result *r, const char *a, const char *b)
{
	size_t j;

	if ((j = doctor_column(r, a)) == (size_t)-1)
		j = doctor_column(r, b);
	return j;
}

/*
 * The replication this server applies, from SHOW ALL SLAVES STATUS
 * (MariaDB) or SHOW REPLICA STATUS (MySQL 8.0.22): ", replica of
 * host:port (SQL thread Yes, lag 3s)" for each source, "" when none;
 * needs REPLICA MONITOR (or REPLICATION CLIENT, SUPER): without it the
 * text says so.
 */
static char *
doctor_replication(struct db *db)
{
	struct db_result *r = NULL;
	struct buf        b;
	char             *errstr = NULL;
	const char       *host, *port, *sql, *lag;
	size_t            i, ch, cp, cs, cl;

	buf_init(&b);
	if (db_query(db, &r, &errstr, "%R",
	        db_is_mariadb(db) ? "SHOW ALL SLAVES STATUS"
	                          : "SHOW REPLICA STATUS") != DB_OK) {
		buf_printf(
		    &b, ", replication status not readable (%s)", errstr);
		goto out;
	}
	ch = doctor_column_any(r, "Master_Host", "Source_Host");
	cp = doctor_column_any(r, "Master_Port", "Source_Port");
	cs = doctor_column_any(r, "Slave_SQL_Running", "Replica_SQL_Running");
	cl = doctor_column_any(
	    r, "Seconds_Behind_Master", "Seconds_Behind_Source");
	for (i = 0; i < r->nrows; i++) {
		host = db_cell(r, i, ch);
		port = db_cell(r, i, cp);
		sql = db_cell(r, i, cs);
		lag = db_cell(r, i, cl);
		buf_printf(&b, ", replica of %s:%s (SQL thread %s, lag %s%s)",
		    host != NULL ? host : "?", port != NULL ? port : "?",
		    sql != NULL ? sql : "?", lag != NULL ? lag : "unknown",
		    lag != NULL ? "s" : "");
	}
out:
	db_result_free(r);
	free(errstr);
	return buf_steal(&b);
}

/*
 * The server's role: a writable primary (OK), a Galera node (OK when
 * Synced in a Primary component and writable), or a replica or read-only
 * server (CRITICAL: run, exec, dispatch and migrate refuse it with exit
 * 69).  The writable test is db_read_only_sql, the one the commands use.
 */
static int
doctor_role(struct db *db, struct doctor_report *r)
{
	int               read_only = 0;
	struct db_result *g = NULL;
	char             *ro = NULL, *errstr = NULL, *repl = NULL;
	const char       *state, *cluster, *ready, *size;
	static const char fix[] = DOCTOR_ROLE_FIX;

	if (db_query_value(
	        db, &ro, &errstr, "SELECT %R", db_read_only_sql(db)) != DB_OK) {
		doctor_add(r, CHECK_CRITICAL, "role", fix,
		    "cannot tell whether %s takes writes: %s", db_where(db),
		    errstr);
		goto out;
	}
	repl = doctor_replication(db);
	/* Galera: wsrep_on and the node's state, from the status. */
	if (db_is_mariadb(db) &&
	    db_query(db, &g, &errstr,
	        "SELECT @@wsrep_on,"
	        " MAX(IF(VARIABLE_NAME = 'WSREP_LOCAL_STATE_COMMENT',"
	        "  VARIABLE_VALUE, NULL)),"
	        " MAX(IF(VARIABLE_NAME = 'WSREP_CLUSTER_STATUS',"
	        "  VARIABLE_VALUE, NULL)),"
	        " MAX(IF(VARIABLE_NAME = 'WSREP_READY', VARIABLE_VALUE, NULL)),"
	        " MAX(IF(VARIABLE_NAME = 'WSREP_CLUSTER_SIZE',"
	        "  VARIABLE_VALUE, NULL))"
	        " FROM information_schema.GLOBAL_STATUS"
	        " WHERE VARIABLE_NAME LIKE 'WSREP%%'") == DB_OK &&
	    g->nrows == 1 && g->ncols == 5 &&
	    db_parse_bool(db_cell(g, 0, 0)) == 1) {
		state = db_cell(g, 0, 1);
		cluster = db_cell(g, 0, 2);
		ready = db_cell(g, 0, 3);
		size = db_cell(g, 0, 4);
		if (ro == NULL && state != NULL &&
		    strcmp(state, "Synced") == 0 && cluster != NULL &&
		    strcmp(cluster, "Primary") == 0 && ready != NULL &&
		    strcmp(ready, "ON") == 0)
			doctor_add(r, CHECK_OK, "role", NULL,
			    "Galera node, %s, in the Primary component of %s "
			    "nodes, writable%s",
			    state, size != NULL ? size : "?", repl);
		else {
			read_only = ro != NULL;
			doctor_add(r, CHECK_CRITICAL, "role",
			    "use a node that is Synced in the Primary "
			    "component and not read-only",
			    "Galera node, state %s, cluster %s, ready %s%s%s%s",
			    state != NULL ? state : "?",
			    cluster != NULL ? cluster : "?",
			    ready != NULL ? ready : "?",
			    ro != NULL ? ", read-only: " : "",
			    ro != NULL ? ro : "", repl);
		}
		goto out;
	}
	if (ro != NULL) {
		read_only = 1;
		doctor_add(r, CHECK_CRITICAL, "role", fix,
		    "%s is read-only (%s)%s: a replica or a demoted primary; "
		    "run, exec, outbox dispatch and db migrate refuse it",
		    db_where(db), ro, repl);
	} else
		doctor_add(r, CHECK_OK, "role", NULL,
		    "%s is a writable primary%s", db_where(db), repl);
out:
	db_result_free(g);
	free(ro);
	free(repl);
	free(errstr);
	return read_only;
}

/* transaction_isolation (tx_isolation before MariaDB 11.1). */
static void
doctor_isolation(struct db *db, struct doctor_report *r)
{
	char *v = NULL, *errstr = NULL;

	if (db_query_value(db, &v, &errstr,
	        "SELECT @@SESSION.transaction_isolation") != DB_OK) {
		free(errstr);
		errstr = NULL;
		if (db_query_value(db, &v, &errstr,
		        "SELECT @@SESSION.tx_isolation") != DB_OK) {
			doctor_add(r, CHECK_WARNING, "isolation", NULL,
			    "cannot read the isolation level: %s", errstr);
			goto out;
		}
	}
	if (v != NULL &&
	    (strcmp(v, "REPEATABLE-READ") == 0 ||
	        strcmp(v, "READ-COMMITTED") == 0))
		doctor_add(r, CHECK_OK, "isolation", NULL,
		    "transaction_isolation %s", v);
	else
		doctor_add(r, CHECK_WARNING, "isolation",
		    "SET GLOBAL transaction_isolation = 'REPEATABLE-READ' (or READ-COMMITTED)",
		    "transaction_isolation %s", v != NULL ? v : "NULL");
out:
	free(v);
	free(errstr);
}

/*
 * The row privileges a run and a dispatch need on the schema, as the
 * server's information_schema shows them for the current account
 * (global, schema, or on each of cronguard's tables), each missing one
 * with what it does, as measured against a user without it (t1180):
 * SELECT, INSERT and UPDATE stop runs and dispatches, INSERT only after a
 * dispatch has sent (CRITICAL); DELETE
 * stops only the pruning and the purges unless keep_sent is off, when a
 * dispatch exits 77 after sending (CRITICAL then, else WARNING); EXECUTE
 * costs statements and fails nothing (WARNING).
 */
static const char *
doctor_privilege_impact(const char *priv, const struct conf *c)
{
	if (strcmp(priv, "SELECT") == 0)
		return "run, exec, outbox dispatch and jobs list exit 77, jobs "
		       "check and outbox check say UNKNOWN";
	if (strcmp(priv, "INSERT") == 0)
		return "run, exec and outbox enqueue exit 77, and outbox "
		       "dispatch exits 77 after sending, leaving its rows "
		       "PROCESSING to be sent again after the lease (the "
		       "attempt log takes an INSERT)";
	if (strcmp(priv, "UPDATE") == 0)
		return "run, exec and outbox dispatch exit 77";
	if (strcmp(priv, "DELETE") == 0)
		return c->outbox.keep_sent
		    ? "old runs are not pruned (run exits 0 with "
		      "runs_prune_failed), jobs purge and outbox resume exit 77"
		    : "outbox dispatch exits 77 after sending, leaving its rows "
		      "PROCESSING to be sent again after the lease (keep_sent is "
		      "off), old runs are not pruned (runs_prune_failed), jobs "
		      "purge and outbox resume exit 77";
	return "nothing fails, but the lock's fencing token costs a second "
	       "statement (lock_fence_extra_statement) and a finalise with "
	       "the attempt log three or four more (outbox_finalise_statements)";
}

static void
doctor_privileges(struct db *db, const struct conf *c, struct doctor_report *r)
{
	struct db_result *res = NULL;
	struct buf        missing, impact;
	const char       *priv;
	char             *errstr = NULL, *user = NULL, *schema = NULL, *fix;
	int               critical = 0;
	size_t            i;

	if (db_query(db, &res, &errstr,
	        "SELECT p.priv FROM (SELECT 'SELECT' AS priv"
	        " UNION ALL SELECT 'INSERT' UNION ALL SELECT 'UPDATE'"
	        " UNION ALL SELECT 'DELETE' UNION ALL SELECT 'EXECUTE') p"
	        " CROSS JOIN (SELECT CONCAT('''',"
	        "  SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''',"
	        "  SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''') AS g) me"
	        " WHERE NOT EXISTS (SELECT 1 FROM"
	        "  information_schema.USER_PRIVILEGES u"
	        "  WHERE u.GRANTEE = me.g AND u.PRIVILEGE_TYPE = p.priv)"
	        " AND NOT EXISTS (SELECT 1 FROM"
	        "  information_schema.SCHEMA_PRIVILEGES s"
	        "  WHERE s.GRANTEE = me.g AND s.PRIVILEGE_TYPE = p.priv"
	        "  AND DATABASE() LIKE s.TABLE_SCHEMA)"
	        " AND (p.priv = 'EXECUTE' OR (SELECT COUNT(DISTINCT t.TABLE_NAME)"
	        "  FROM information_schema.TABLE_PRIVILEGES t"
	        "  WHERE t.GRANTEE = me.g AND t.PRIVILEGE_TYPE = p.priv"
	        "  AND t.TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME IN"
	        "  ('outbox_messages', 'cronguard_runs', 'cronguard_leases',"
	        "   'cronguard_channels')) < 4)"
	        " ORDER BY FIELD(p.priv, 'SELECT', 'INSERT', 'UPDATE', 'DELETE',"
	        " 'EXECUTE')") != DB_OK) {
		doctor_add(r, CHECK_WARNING, "privileges",
		    "check that the user can read information_schema",
		    "cannot read the privileges: %s", errstr);
		goto out;
	}
	if (res->nrows == 0) {
		doctor_add(r, CHECK_OK, "privileges", NULL,
		    "SELECT, INSERT, UPDATE, DELETE and EXECUTE on the schema");
		goto out;
	}
	buf_init(&missing);
	buf_init(&impact);
	for (i = 0; i < res->nrows; i++) {
		if ((priv = db_cell(res, i, 0)) == NULL)
			continue;
		buf_printf(&missing, "%s%s", missing.len > 0 ? ", " : "", priv);
		buf_printf(&impact, "%swithout %s: %s",
		    impact.len > 0 ? "; " : "", priv,
		    doctor_privilege_impact(priv, c));
		if (strcmp(priv, "EXECUTE") != 0 &&
		    (strcmp(priv, "DELETE") != 0 || !c->outbox.keep_sent))
			critical = 1;
	}
	/* Only for the fix line: without them it names USER and SCHEMA. */
	(void)db_query_value(db, &user, &errstr, "SELECT CURRENT_USER()");
	free(errstr);
	errstr = NULL;
	(void)db_query_value(db, &schema, &errstr, "SELECT DATABASE()");
	free(errstr);
	errstr = NULL;
	fix = xasprintf(
	    "GRANT %s ON %s.* TO the user %s (as in the README's First setup)",
	    missing.data, schema != NULL ? schema : "SCHEMA",
	    user != NULL ? user : "USER");
	doctor_add(r, critical ? CHECK_CRITICAL : CHECK_WARNING, "privileges",
	    fix, "%s missing on the schema: %s", missing.data, impact.data);
	free(fix);
	buf_free(&missing);
	buf_free(&impact);
out:
	db_result_free(res);
	free(user);
	free(schema);
	free(errstr);
}

/* A job's zone that only this host reads (a schedule's slots, from the
 * host's tzdata, schedule.c): whether the host has it. */
static void
doctor_host_zone(const struct conf_job *j, struct doctor_report *r)
{
	struct tzone *z = NULL;
	char         *errstr = NULL, *fix;

	if (tzone_open(j->timezone, &z, &errstr) == 0) {
		doctor_add(r, CHECK_OK, "timezone", NULL,
		    "job %s: its schedule reads %s from this host's tzdata "
		    "(the server's time-zone tables are not used)",
		    j->name, j->timezone);
		tzone_free(z);
		return;
	}
	fix = xasprintf("install tzdata on this host, or correct "
	                "jobs.%s.timezone",
	    j->name);
	doctor_add(
	    r, CHECK_CRITICAL, "timezone", fix, "job %s: %s", j->name, errstr);
	free(fix);
	free(errstr);
}

/*
 * Every time zone a job names.  once_per converts its slots in SQL, so
 * the server must know the zone: a name it does not know fails the
 * job's first run (exit 78); a fixed offset (+09:00) needs no tables.  A
 * schedule without once_per reads the zone from this host's tzdata
 * (doctor_host_zone): the server's tables do not matter to it.
 */
static void
doctor_timezones(struct db *db, const struct conf *c, struct doctor_report *r)
{
	const struct conf_job *j;
	char                  *v = NULL, *utc = NULL, *errstr = NULL, *fix;
	size_t                 i;

	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		if (j->timezone == NULL)
			continue;
		if (j->once_per_ms == 0) {
			doctor_host_zone(j, r);
			continue;
		}
		if (db_query_value(db, &v, &errstr,
		        "SELECT CONVERT_TZ('2001-01-01 00:00:00', '+00:00', %s)",
		        j->timezone) != DB_OK) {
			doctor_add(r, CHECK_WARNING, "timezone", NULL,
			    "job %s: cannot ask the server about %s: %s",
			    j->name, j->timezone, errstr);
		} else if (v != NULL) {
			doctor_add(r, CHECK_OK, "timezone", NULL,
			    "job %s: the server knows %s", j->name,
			    j->timezone);
		} else {
			/* Without tables the server knows no name at all. */
			(void)db_query_value(db, &utc, &errstr,
			    "SELECT CONVERT_TZ('2001-01-01 00:00:00', "
			    "'+00:00', 'UTC')");
			if (utc != NULL)
				fix = xasprintf(
				    "correct jobs.%s.timezone: a name "
				    "the server knows, or an offset "
				    "such as +09:00",
				    j->name);
			else
				fix = xstrdup(
				    "load the server's time-zone tables: "
				    "mariadb-tzinfo-to-sql /usr/share/zoneinfo | "
				    "mariadb mysql (or give an offset such as "
				    "+09:00)");
			doctor_add(r, CHECK_CRITICAL, "timezone", fix,
			    "job %s: the server does not know the time zone "
			    "%s%s: its first run would exit 78",
			    j->name, j->timezone,
			    utc == NULL ? " (it has no time-zone tables)" : "");
			free(fix);
			free(utc);
			utc = NULL;
		}
		free(v);
		v = NULL;
		free(errstr);
		errstr = NULL;
	}
}

/* The fix for a failed connect, by the server's or client's error. */
static const char *
doctor_connect_fix(unsigned err)
{
	switch (err) {
	case 1045: /* ER_ACCESS_DENIED_ERROR */
		return "check database.user and its password (password_file), "
		       "and that the user may connect from this host";
	case 1049: /* ER_BAD_DB_ERROR */
		return "create the database first (CREATE DATABASE ... "
		       "CHARACTER SET utf8mb4, as in the README's First setup), "
		       "or correct database.name";
	case 1044: /* ER_DBACCESS_DENIED_ERROR */
		return "GRANT the user its privileges on the schema (README, "
		       "First setup)";
	case 2002: /* CR_CONNECTION_ERROR: the socket */
		return "correct database.socket (Debian's MariaDB: "
		       "/run/mysqld/mysqld.sock), or start the server";
	default:
		return "check the database section, the server and the network";
	}
}

/* The slots of a job with a schedule and no timezone follow the server's
 * zone: it must be known by name (tzone_open_server), else run refuses
 * the job (78) rather than guess an offset. */
static void
doctor_server_zone(const struct conf *c, const char *global,
    const char *system_zone, struct doctor_report *r)
{
	const struct conf_job *j;
	struct tzone          *z = NULL;
	char                  *errstr = NULL, *fix;
	int    sys = global != NULL && strcmp(global, "SYSTEM") == 0;
	size_t i;

	for (i = 0; i < c->njobs; i++) {
		j = &c->jobs[i];
		if (j->schedule_text == NULL || j->timezone != NULL)
			continue;
		if (tzone_open_server(
		        sys ? system_zone : global, sys, &z, &errstr) == 0) {
			doctor_add(r, CHECK_OK, "time_zone", NULL,
			    "job %s has no timezone: its slots follow the "
			    "server's %s",
			    j->name, tzone_name(z));
			tzone_free(z);
			z = NULL;
			continue;
		}
		fix =
		    xasprintf("timezone = \"America/New_York\" (the "
		              "server's Area/City) on job %s, or the server's "
		              "time_zone",
		        j->name);
		doctor_add(r, CHECK_CRITICAL, "time_zone", fix,
		    "job %s has no timezone, and %s: run refuses it (78)",
		    j->name, errstr);
		free(fix);
		free(errstr);
		errstr = NULL;
	}
}

/* The server's time_zone, and its clock against this host's. */
static void
doctor_clock(const struct conf *c, struct db *db, struct doctor_report *r)
{
	struct db_result *res = NULL;
	char             *errstr = NULL;
	double            server_s;
	int64_t           before, after, diff;
	const char       *perr;

	before = now_wall_ms();
	if (db_query(db, &res, &errstr,
	        "SELECT @@GLOBAL.time_zone, @@system_time_zone,"
	        " UNIX_TIMESTAMP(NOW(6))") != DB_OK ||
	    db_one_row(res, 3, &errstr) != DB_OK) {
		doctor_add(r, CHECK_WARNING, "clock", NULL,
		    "cannot read the server's clock: %s", errstr);
		goto out;
	}
	after = now_wall_ms();
	doctor_server_zone(c, db_cell(res, 0, 0), db_cell(res, 0, 1), r);
	if (db_cell(res, 0, 2) == NULL ||
	    parse_double(db_cell(res, 0, 2), 0, 1e11, &server_s, &perr) != 0) {
		doctor_add(r, CHECK_WARNING, "clock", NULL,
		    "cannot read the server's clock");
		goto out;
	}
	/* Against the middle of the round trip. */
	diff = (int64_t)(server_s * 1000) - (before + after) / 2;
	if (diff < 0)
		diff = -diff;
	if (diff > DOCTOR_CLOCK_WARN_MS)
		doctor_add(r, CHECK_WARNING, "clock",
		    "synchronise both clocks with NTP (chrony, systemd-timesyncd)",
		    "this host's clock and the server's differ by %lld ms (time_zone %s, system %s)",
		    (long long)diff,
		    db_cell(res, 0, 0) ? db_cell(res, 0, 0) : "NULL",
		    db_cell(res, 0, 1) ? db_cell(res, 0, 1) : "NULL");
	else
		doctor_add(r, CHECK_OK, "clock", NULL,
		    "clocks within %lld ms (time_zone %s, system %s)",
		    (long long)diff,
		    db_cell(res, 0, 0) ? db_cell(res, 0, 0) : "NULL",
		    db_cell(res, 0, 1) ? db_cell(res, 0, 1) : "NULL");
out:
	db_result_free(res);
	free(errstr);
}

static void
doctor_migrations(struct db *db, struct doctor_report *r)
{
	struct migration_set set = { NULL, 0 };
	char                *errstr = NULL;
	size_t               pending, changed, missing;

	if (migrate_scan(migrate_sqldir(), &set, &errstr) != 0 ||
	    migrate_load(db, &set, 0, &errstr) != DB_OK) {
		doctor_add(r, CHECK_CRITICAL, "migrations",
		    "check the migrations directory and cronguard_schema", "%s",
		    errstr);
		goto out;
	}
	pending = migrate_count(&set, MIGRATION_PENDING);
	changed = migrate_count(&set, MIGRATION_CHANGED);
	missing = migrate_count(&set, MIGRATION_MISSING);
	if (changed > 0 || missing > 0)
		doctor_add(r, CHECK_CRITICAL, "migrations",
		    "install the cronguard release that applied them (cronguard db status lists them)",
		    "%zu applied migration(s) changed, %zu without a file",
		    changed, missing);
	else if (pending > 0)
		doctor_add(r, CHECK_CRITICAL, "migrations",
		    "cronguard db migrate", "%zu migration(s) pending",
		    pending);
	else
		doctor_add(r, CHECK_OK, "migrations", NULL,
		    "%zu migration(s) applied", set.n);
out:
	migrate_set_free(&set);
	free(errstr);
}

/* The configuration and the secret files against the one mode rule that
 * loading applies too (conf_file_problem); a secret file must also
 * be readable by this user and not empty. */
static void
doctor_file(
    struct doctor_report *r, const char *what, const char *path, int secret)
{
	struct stat sb;
	char       *reason, *fix;

	if (stat(path, &sb) != 0) {
		doctor_add(r, CHECK_CRITICAL, what,
		    "create it, or fix the path", "%s: cannot stat: %s", path,
		    strerror(errno));
		return;
	}
	if (conf_file_problem(path, &sb, secret, &reason, &fix) == 0 &&
	    (!secret || conf_secret_problem(path, NULL, &reason, &fix) == 0)) {
		doctor_add(r, CHECK_OK, what, NULL, "%s mode %04o", path,
		    (unsigned)(sb.st_mode & 07777));
		return;
	}
	doctor_add(r, CHECK_CRITICAL, what, fix, "%s", reason);
	free(reason);
	free(fix);
}

static void
doctor_files(const struct conf *c, struct doctor_report *r)
{
	size_t i;

	doctor_file(r, "config_file", c->path, 0);
	for (i = 0; i < c->nsecrets; i++)
		doctor_file(r, "secret_file", c->secrets[i].path, 1);
}

/* One TCP connect to ai within DOCTOR_CONNECT_MS: 0, or an errno. */
static int
doctor_connect_one(const struct addrinfo *ai)
{
	struct pollfd pfd;
	socklen_t     len = sizeof(int);
	int           fd, err = 0;

	fd = socket(ai->ai_family,
	    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd == -1)
		return errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		goto out;
	if (errno != EINPROGRESS) {
		err = errno;
		goto out;
	}
	pfd.fd = fd;
	pfd.events = POLLOUT;
	switch (poll(&pfd, 1, DOCTOR_CONNECT_MS)) {
	case -1:
		err = errno;
		break;
	case 0:
		err = ETIMEDOUT;
		break;
	default:
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
			err = errno;
		break;
	}
out:
	close(fd);
	return err;
}

/* The host and port of url (AMQP's default ports added); 0, or -1. */
static int
doctor_url_hostport(const char *url, char **host, char **port)
{
	CURLU *u;
	char  *scheme = NULL, *h = NULL, *p = NULL;
	int    rc = -1;

	*host = *port = NULL;
	if ((u = curl_url()) == NULL)
		return -1;
	if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) !=
	        CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK)
		goto out;
	if (curl_url_get(u, CURLUPART_PORT, &p, CURLU_DEFAULT_PORT) ==
	    CURLUE_OK)
		*port = xstrdup(p);
	else if (strcmp(scheme, "amqp") == 0)
		*port = xstrdup("5672");
	else if (strcmp(scheme, "amqps") == 0)
		*port = xstrdup("5671");
	else
		goto out;
	/* "[::1]" to "::1" */
	if (h[0] == '[' && strlen(h) > 2)
		*host = xstrndup(h + 1, strlen(h) - 2);
	else
		*host = xstrdup(h);
	rc = 0;
out:
	curl_free(scheme);
	curl_free(h);
	curl_free(p);
	curl_url_cleanup(u);
	return rc;
}

/* ------------------------------------------------------- channels */

/*
 * Each channel (and the alert URL) is probed in stages: name resolution,
 * TCP connect, TLS handshake with certificate verification when the URL
 * uses TLS, then the protocol: SMTP greeting, EHLO and AUTH (libcurl's
 * connect phase, CURLOPT_CONNECT_ONLY: no MAIL FROM, nothing sent),
 * HTTP HEAD (any answer below 500 means reachable: a webhook endpoint
 * may well refuse HEAD with 405).  A stage is reported only when the
 * stages before it passed.  Each probe gives up after DOCTOR_CHECK_MS,
 * or the channel's own timeout when that is shorter.
 */

/* What the SMTP conversation showed, from libcurl's debug callback. */
struct doctor_smtp {
	int  ehlo_sent;  /* the last command was EHLO */
	int  ehlo_ok;    /* and the server answered 250 */
	char auth[128];  /* its AUTH mechanisms, "" none */
	char reply[160]; /* the server's last line */
};

static int
doctor_smtp_debug(
    CURL *easy, curl_infotype type, char *data, size_t size, void *arg)
{
	struct doctor_smtp *s = arg;

	(void)easy;
	if (type == CURLINFO_HEADER_OUT) {
		/* After STARTTLS the client says EHLO again: the second
		 * answer is the one that counts. */
		s->ehlo_sent = size >= 5 && strncasecmp(data, "EHLO ", 5) == 0;
		if (s->ehlo_sent) {
			s->ehlo_ok = 0;
			s->auth[0] = '\0';
		}
		return 0;
	}
	if (type != CURLINFO_HEADER_IN || size < 4)
		return 0;
	line_copy(s->reply, sizeof s->reply, data, size);
	if (!s->ehlo_sent || strncmp(data, "250", 3) != 0)
		return 0;
	s->ehlo_ok = 1;
	if (size > 9 && strncasecmp(data + 4, "AUTH", 4) == 0 &&
	    (data[8] == ' ' || data[8] == '='))
		line_copy(s->auth, sizeof s->auth, data + 9, size - 9);
	return 0;
}

/* What a probe is about: "channel" with the channel, or "alert". */
struct doctor_target {
	const char                *kind;  /* prefix of the check names */
	const char                *label; /* first word of each finding */
	const char                *key;   /* the setting to correct */
	const struct conf_channel *ch;    /* NULL for the alert URL */
	const char                *url;
	int64_t                    timeout_ms;
};

static void doctor_stage(struct doctor_report *, const struct doctor_target *,
    enum check_status, const char *stage, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* One result named KIND_STAGE, its finding "LABEL: ..." */
static void
doctor_stage(struct doctor_report *r, const struct doctor_target *t,
    enum check_status st, const char *stage, const char *fix, const char *fmt,
    ...)
{
	va_list ap;
	char   *name, *finding;

	name = xasprintf("%s_%s", t->kind, stage);
	va_start(ap, fmt);
	finding = xvasprintf(fmt, ap);
	va_end(ap);
	doctor_add(r, st, name, fix, "%s: %s", t->label, finding);
	free(name);
	free(finding);
}

/* libcurl's errors of the TLS layer (STARTTLS refused among them). */
static int
doctor_tls_error(CURLcode rc)
{
	switch (rc) {
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_ENGINE_INITFAILED:
	case CURLE_USE_SSL_FAILED:
		return 1;
	default:
		return 0;
	}
}

/* Whether the probe of t speaks TLS: an "s" scheme, or STARTTLS. */
static int
doctor_uses_tls(const struct doctor_target *t)
{
	return strncasecmp(t->url, "https:", 6) == 0 ||
	    strncasecmp(t->url, "smtps:", 6) == 0 ||
	    (t->ch != NULL && t->ch->tls != NULL &&
	        strcmp(t->ch->tls, "required") == 0);
}

/* The protocol stage of an SMTP channel, after a finished connect. */
static void
doctor_smtp_verdict(struct doctor_report *r, const struct doctor_target *t,
    CURLcode rc, const char *err, const struct doctor_smtp *s)
{
	const struct conf_channel *ch = t->ch;
	char                      *fix = NULL;

	if (rc == CURLE_LOGIN_DENIED) {
		fix = xasprintf(
		    "correct channels.%s.username and its password", ch->name);
		doctor_stage(r, t, CHECK_CRITICAL, "smtp", fix,
		    "AUTH as %s refused: %s", ch->username,
		    s->reply[0] != '\0' ? s->reply : err);
	} else if (rc != CURLE_OK) {
		fix = xasprintf(
		    "check the mail server's log, or correct %s", t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "smtp", fix, "%s%s%s", err,
		    s->reply[0] != '\0' ? "; the server said: " : "", s->reply);
	} else if (!s->ehlo_ok) {
		fix = xasprintf(
		    "check the mail server's log, or correct %s", t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "smtp", fix,
		    "no 250 answer to EHLO (last: %s)", s->reply);
	} else if (ch->username != NULL && s->auth[0] == '\0') {
		fix = xasprintf("enable AUTH on the mail server (over TLS), or "
		                "remove channels.%s.username",
		    ch->name);
		doctor_stage(r, t, CHECK_CRITICAL, "smtp", fix,
		    "EHLO answered but AUTH is not offered: the username of "
		    "the channel cannot be used");
	} else if (ch->username != NULL)
		doctor_stage(r, t, CHECK_OK, "smtp", NULL,
		    "EHLO answered, AUTH %s offered, logged in as %s; "
		    "nothing sent",
		    s->auth, ch->username);
	else
		doctor_stage(r, t, CHECK_OK, "smtp", NULL,
		    "EHLO answered%s%s; nothing sent",
		    s->auth[0] != '\0' ? ", AUTH offered: " : "", s->auth);
	free(fix);
}

static void
doctor_http_verdict(struct doctor_report *r, const struct doctor_target *t,
    CURLcode rc, const char *err, long code)
{
	char *fix;

	fix = xasprintf("check the endpoint's server, or correct %s", t->key);
	if (rc != CURLE_OK)
		doctor_stage(
		    r, t, CHECK_CRITICAL, "http", fix, "HEAD: %s", err);
	else if (code >= 500)
		doctor_stage(r, t, CHECK_WARNING, "http", fix,
		    "HEAD answered %ld: the endpoint reports a server error",
		    code);
	else
		doctor_stage(r, t, CHECK_OK, "http", NULL,
		    "HEAD answered %ld: reachable", code);
	free(fix);
}

/* The options of the probe: an SMTP channel's login (the connect phase
 * only, the dialogue read by doctor_smtp_debug into *smtp), else an HTTP
 * HEAD with the channel's headers.  Returns the header list to free
 * after the transfer (NULL for none). */
static struct curl_slist *
doctor_curl_setup(CURL *easy, const struct conf_channel *ch, int is_smtp,
    struct doctor_smtp *smtp)
{
	struct curl_slist *hdrs = NULL;
	size_t             i;

	if (ch != NULL && ch->tls_ca != NULL) {
		curl_easy_setopt(easy, CURLOPT_CAINFO, ch->tls_ca);
		curl_easy_setopt(easy, CURLOPT_CAPATH, (char *)NULL);
	}
	if (is_smtp) {
		/* Greeting, EHLO, STARTTLS, AUTH: libcurl's connect phase;
		 * QUIT at cleanup. */
		curl_easy_setopt(easy, CURLOPT_CONNECT_ONLY, 1L);
		curl_easy_setopt(
		    easy, CURLOPT_DEBUGFUNCTION, doctor_smtp_debug);
		curl_easy_setopt(easy, CURLOPT_DEBUGDATA, smtp);
		curl_easy_setopt(easy, CURLOPT_VERBOSE, 1L);
		if (ch->tls != NULL && strcmp(ch->tls, "required") == 0)
			curl_easy_setopt(
			    easy, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
		if (ch->username != NULL) {
			curl_easy_setopt(easy, CURLOPT_USERNAME, ch->username);
			curl_easy_setopt(easy, CURLOPT_PASSWORD,
			    ch->password != NULL ? ch->password : "");
		}
		return NULL;
	}
	curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard_write);
	curl_easy_setopt(easy, CURLOPT_USERAGENT, "cronguard/" PACKAGE_VERSION);
	for (i = 0; ch != NULL && i < ch->nheaders; i++)
		hdrs = curl_slist_append(hdrs, ch->headers[i]);
	curl_easy_setopt(easy, CURLOPT_HTTPHEADER, hdrs);
	return hdrs;
}

/* The fix of a failed TLS stage, allocated. */
static char *
doctor_tls_fix(const struct doctor_target *t, CURLcode rc, const char *host)
{
	const struct conf_channel *ch = t->ch;

	if (rc == CURLE_USE_SSL_FAILED)
		return xasprintf(
		    "enable STARTTLS on the server, or use smtps:// in %s",
		    t->key);
	return xasprintf(
	    "give the server a certificate for %s from a CA in %s, or correct %s",
	    host,
	    ch != NULL && ch->tls_ca != NULL ? "the channel's tls_ca"
	                                     : "the system store",
	    t->key);
}

/* Probe t with one libcurl transfer and report each stage it passed and
 * the first it failed. */
static void
doctor_curl(struct doctor_report *r, const struct doctor_target *t)
{
	const struct conf_channel *ch = t->ch;
	struct doctor_smtp         smtp;
	struct curl_slist         *hdrs = NULL;
	CURL                      *easy = NULL;
	CURLcode                   rc;
	curl_off_t                 dns_us = 0, tcp_us = 0, tls_us = 0;
	char                       err[CURL_ERROR_SIZE] = "", *fix = NULL;
	char                      *host = NULL, *port = NULL, *ip = NULL;
	const char                *why;
	long                       code = 0, ms, rport = 0;
	int                        is_smtp, tls;

	memset(&smtp, 0, sizeof smtp);
	is_smtp = ch != NULL && ch->type == CHANNEL_SMTP;
	tls = doctor_uses_tls(t);
	ms = (long)(t->timeout_ms > 0 && t->timeout_ms < DOCTOR_CHECK_MS
	        ? t->timeout_ms
	        : DOCTOR_CHECK_MS);
	if (doctor_url_hostport(t->url, &host, &port) != 0) {
		fix = xasprintf("correct %s", t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "dns", fix,
		    "no host and port in the url");
		goto out;
	}
	if ((easy = curlutil_easy(t->url,
	         is_smtp ? "smtp,smtps" : CURLUTIL_HTTP, ms, err)) == NULL) {
		doctor_stage(r, t, CHECK_UNKNOWN, "connect",
		    "check this host's memory and libcurl",
		    "curl_easy_init failed");
		goto out;
	}
	hdrs = doctor_curl_setup(easy, ch, is_smtp, &smtp);
	rc = curl_easy_perform(easy);
	why = err[0] != '\0' ? err : curl_easy_strerror(rc);
	curl_easy_getinfo(easy, CURLINFO_NAMELOOKUP_TIME_T, &dns_us);
	curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &tcp_us);
	curl_easy_getinfo(easy, CURLINFO_APPCONNECT_TIME_T, &tls_us);
	curl_easy_getinfo(easy, CURLINFO_PRIMARY_IP, &ip);
	curl_easy_getinfo(easy, CURLINFO_PRIMARY_PORT, &rport);
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);

	if (rc == CURLE_COULDNT_RESOLVE_HOST ||
	    (rc == CURLE_OPERATION_TIMEDOUT && dns_us == 0)) {
		fix = xasprintf("correct the host in %s, or this host's "
		                "resolver (/etc/resolv.conf)",
		    t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "dns", fix,
		    "cannot resolve %s: %s", host, why);
		goto out;
	}
	doctor_stage(r, t, CHECK_OK, "dns", NULL, "%s resolved in %lld ms",
	    host, (long long)(dns_us / 1000));
	if (rc == CURLE_COULDNT_CONNECT ||
	    (rc == CURLE_OPERATION_TIMEDOUT && tcp_us == 0)) {
		fix = xasprintf("start the server, or correct %s", t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "connect", fix,
		    "cannot connect to %s port %s: %s", host, port, why);
		goto out;
	}
	doctor_stage(r, t, CHECK_OK, "connect", NULL,
	    "connected to %s port %ld in %lld ms", ip != NULL ? ip : host,
	    rport, (long long)(tcp_us / 1000));
	if (tls &&
	    (doctor_tls_error(rc) ||
	        (rc == CURLE_OPERATION_TIMEDOUT && tls_us == 0))) {
		fix = doctor_tls_fix(t, rc, host);
		doctor_stage(r, t, CHECK_CRITICAL, "tls", fix,
		    "TLS with %s: %s", host, why);
		goto out;
	}
	if (tls)
		doctor_stage(r, t, CHECK_OK, "tls", NULL,
		    "handshake done and certificate verified for %s in %lld ms",
		    host, (long long)(tls_us / 1000));
	if (is_smtp)
		doctor_smtp_verdict(r, t, rc, why, &smtp);
	else
		doctor_http_verdict(r, t, rc, why, code);
out:
	curl_easy_cleanup(easy);
	curl_slist_free_all(hdrs);
	free(host);
	free(port);
	free(fix);
}

/* An AMQP channel's login (and TLS handshake for amqps://), bounded as
 * the other probes: connection, channel and confirm mode opened as a
 * dispatcher does, nothing published. */
static void
doctor_amqp(struct doctor_report *r, const struct doctor_target *t)
{
	struct conf_channel bounded = *t->ch;
	char               *errstr = NULL, *fix = NULL;
	bool                auth;

	if (bounded.timeout_ms <= 0 || bounded.timeout_ms > DOCTOR_CHECK_MS)
		bounded.timeout_ms = DOCTOR_CHECK_MS;
	if (channel_amqp_probe(&bounded, &auth, &errstr) == 0) {
		doctor_stage(r, t, CHECK_OK, "amqp", NULL,
		    "connection opened%s%s; nothing published",
		    t->ch->username != NULL ? ", logged in as " : "",
		    t->ch->username != NULL ? t->ch->username : "");
		goto out;
	}
	fix = auth ? xasprintf("correct channels.%s.username and its "
	                       "password, or the user's permissions on the "
	                       "vhost",
	                 t->ch->name)
	           : xasprintf("check the broker's log (TLS, vhost, limits), "
	                       "or correct %s",
	                 t->key);
	doctor_stage(r, t, CHECK_CRITICAL, "amqp", fix, "%s", errstr);
out:
	free(errstr);
	free(fix);
}

/* An AMQP channel (libcurl does not speak it): name resolution, a TCP
 * connect within DOCTOR_CONNECT_MS, then doctor_amqp. */
static void
doctor_socket(struct doctor_report *r, const struct doctor_target *t)
{
	struct addrinfo hints, *res = NULL, *ai;
	char           *host = NULL, *port = NULL, *fix = NULL;
	int             gai, err = 0;
	int64_t         start;

	if (doctor_url_hostport(t->url, &host, &port) != 0) {
		fix = xasprintf("correct %s", t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "dns", fix,
		    "no host and port in the url");
		goto out;
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	start = now_mono_ms();
	if ((gai = getaddrinfo(host, port, &hints, &res)) != 0) {
		fix = xasprintf("correct the host in %s, or this host's "
		                "resolver (/etc/resolv.conf)",
		    t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "dns", fix,
		    "cannot resolve %s: %s", host, gai_strerror(gai));
		goto out;
	}
	doctor_stage(r, t, CHECK_OK, "dns", NULL, "%s resolved in %lld ms",
	    host, (long long)(now_mono_ms() - start));
	start = now_mono_ms();
	for (ai = res; ai != NULL; ai = ai->ai_next)
		if ((err = doctor_connect_one(ai)) == 0)
			break;
	if (err != 0) {
		fix = xasprintf("start the server, or correct %s", t->key);
		doctor_stage(r, t, CHECK_CRITICAL, "connect", fix,
		    "cannot connect to %s port %s: %s", host, port,
		    strerror(err));
		goto out;
	}
	doctor_stage(r, t, CHECK_OK, "connect", NULL,
	    "connected to %s port %s in %lld ms", host, port,
	    (long long)(now_mono_ms() - start));
	doctor_amqp(r, t);
out:
	if (res != NULL)
		freeaddrinfo(res);
	free(host);
	free(port);
	free(fix);
}

/* A channel's secret file cannot be used: the fix of its first problem. */
static void
doctor_secret_failed(struct doctor_report *r, const struct conf *c,
    const struct doctor_target *t, const char *errstr)
{
	char  *reason = NULL, *fix = NULL;
	size_t i;

	for (i = 0; i < c->nsecrets && fix == NULL; i++)
		if (c->secrets[i].channel != NULL &&
		    strcmp(c->secrets[i].channel, t->label) == 0 &&
		    conf_secret_problem(
		        c->secrets[i].path, NULL, &reason, &fix) == 0)
			reason = fix = NULL;
	doctor_stage(r, t, CHECK_CRITICAL, "secret",
	    fix != NULL ? fix : "check the channel's secret files", "%s",
	    errstr);
	free(reason);
	free(fix);
}

static void
doctor_channel(
    struct conf *c, const struct conf_channel *ch, struct doctor_report *r)
{
	struct doctor_target t;
	char                *key, *errstr = NULL;

	key = xasprintf("channels.%s.url", ch->name);
	t.kind = "channel";
	t.label = ch->name;
	t.key = key;
	t.ch = ch;
	t.url = ch->url;
	t.timeout_ms = ch->timeout_ms;
	/* A probe without the channel's password would fail for the wrong
	 * reason. */
	if (conf_read_secrets(c, ch->name, &errstr) != 0)
		doctor_secret_failed(r, c, &t, errstr);
	else if (ch->type == CHANNEL_AMQP)
		doctor_socket(r, &t);
	else
		doctor_curl(r, &t);
	free(key);
	free(errstr);
}

/* The alert URL takes the incidents' POST: HEAD answered is enough. */
static void
doctor_alert(const struct conf *c, struct doctor_report *r)
{
	struct doctor_target t;

	t.kind = "alert";
	t.label = "alert";
	t.key = "alert.url";
	t.ch = NULL;
	t.url = c->alert_url;
	t.timeout_ms = c->alert_timeout_ms;
	doctor_curl(r, &t);
}

void
doctor_run(struct db *db, const char *db_error, struct conf *c,
    struct doctor_report *r)
{
	size_t i;
	int    skip_locked, read_only;

	memset(r, 0, sizeof *r);
	r->worst = CHECK_OK;
	if (db == NULL)
		doctor_add(r, CHECK_UNKNOWN, "database",
		    doctor_connect_fix(db_connect_errno()), "%s",
		    db_error != NULL ? db_error : "not connected");
	else {
		/* Causes before what they cause: a read-only server or a
		 * schema behind the release fails the claim's EXPLAIN too,
		 * and the verdict names the first worst result. */
		skip_locked = doctor_server(db, r);
		read_only = doctor_role(db, r);
		doctor_migrations(db, r);
		if (skip_locked) {
			doctor_claim_index(db, c, read_only, r);
			doctor_runs_index(db, c, r);
			doctor_history_index(db, r);
		}
		doctor_timeouts(db, c, r);
		doctor_packet(db, c, r);
		doctor_wsrep(db, c, r);
		doctor_isolation(db, r);
		doctor_clock(c, db, r);
		doctor_privileges(db, c, r);
		doctor_timezones(db, c, r);
	}
	doctor_files(c, r);
	for (i = 0; i < c->nchannels; i++)
		doctor_channel(c, &c->channels[i], r);
	if (c->alert_url != NULL)
		doctor_alert(c, r);
	/* Unreachable is UNKNOWN whatever the files say. */
	if (db == NULL)
		r->worst = CHECK_UNKNOWN;
}

void
doctor_report_free(struct doctor_report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].finding);
		free(r->v[i].fix);
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
}
