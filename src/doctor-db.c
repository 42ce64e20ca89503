/* doctor-db.c: the checks of "cronguard doctor" on the database server
 * (doctor-int.h): its version and SKIP LOCKED, its role, the indexes the
 * hot statements need (by their EXPLAIN), the session settings, the
 * user's privileges and the migrations. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>

#include "doctor-int.h"
#include "migrate.h"
#include "outbox-admin.h"
#include "outbox.h"
#include "runs.h"
#include "util.h"

/* Where the writes must go: the fix of role, and of the checks a
 * read-only server refuses. */
#define DOCTOR_ROLE_FIX \
	"point database.host at the writable primary (its address, VIP or " \
	"proxy), not a replica: see cronguard(1), REPLICATION AND FAILOVER"

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
int
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
void
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
	        c->outbox.batch_size, NULL, NULL, &sql, &errstr) != 0 ||
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
void
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
void
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
void
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
void
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
void
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
int
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
void
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

void
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

void
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
