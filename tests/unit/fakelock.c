/* fakelock.c: the fake database of fakelock.h. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakelock.h"
#include "incident.h"
#include "log.h"
#include "runs.h"
#include "testutil.h"
#include "util.h"

struct fake fake;

struct fake_conn {
	unsigned long long id;
};

#define MAX_INCIDENTS 16
static struct {
	char event[64];
	char detail[512];
} fake_seen[MAX_INCIDENTS];
int fake_nseen;

static void
sink(const struct incident *in, void *arg)
{
	(void)arg;
	if (fake_nseen == MAX_INCIDENTS)
		return;
	snprintf(fake_seen[fake_nseen].event,
	    sizeof fake_seen[fake_nseen].event, "%s", in->event);
	snprintf(fake_seen[fake_nseen].detail,
	    sizeof fake_seen[fake_nseen].detail, "%s",
	    in->detail != NULL ? in->detail : "");
	fake_nseen++;
}

int
fake_seen_event(const char *event)
{
	int i, n = 0;

	for (i = 0; i < fake_nseen; i++)
		if (strcmp(fake_seen[i].event, event) == 0)
			n++;
	return (n);
}

const char *
fake_seen_detail(const char *event)
{
	int i;

	for (i = 0; i < fake_nseen; i++)
		if (strcmp(fake_seen[i].event, event) == 0)
			return (fake_seen[i].detail);
	return ("");
}

static char *
fdup(struct fval v)
{
	return (v.null ? NULL : xstrdup(v.s));
}

static enum db_status
f_connect(void *ctx, void **conn, char **errstr)
{
	struct fake_conn *c;

	(void)ctx;
	fake.connects++;
	if (fake.connect_fail_from != 0 &&
	    fake.connects >= fake.connect_fail_from) {
		*errstr = xstrdup("cannot connect to fake: refused");
		*conn = NULL;
		return (DB_ERR_CONNECT);
	}
	c = xcalloc(1, sizeof *c);
	c->id = 100 + (unsigned long long)fake.connects;
	*conn = c;
	return (DB_OK);
}

static int
f_destroy(void *conn, char **errstr)
{
	fake.destroys++;
	free(conn);
	if (fake.destroy_fail && errstr != NULL) {
		*errstr = xstrdup("fake: shutdown failed");
		return (-1);
	}
	return (0);
}

static enum db_status
f_get_lock(
    void *conn, const char *name, struct lock_acquire_row *row, char **errstr)
{
	struct fake_conn *c = conn;

	(void)name;
	(void)errstr;
	row->got = fdup(fake.get_lock);
	row->connection_id = xasprintf("%llu", c->id);
	row->wsrep_on = fake.wsrep != NULL ? xstrdup(fake.wsrep) : NULL;
	row->fence = fake.fence != NULL ? xstrdup(fake.fence) : NULL;
	fake.lock_session = c->id;
	return (DB_OK);
}

static enum db_status
f_release_lock(void *conn, const char *name, char **value, char **errstr)
{
	(void)conn;
	(void)name;
	fake.releases++;
	*value = NULL;
	if (fake.release_st != DB_OK) {
		*errstr = xstrdup("query failed: Lost connection to server "
		                  "during query");
		return (fake.release_st);
	}
	*value = fdup(fake.release);
	return (DB_OK);
}

static enum db_status
f_is_used_lock(void *conn, const char *name, char **value, char **errstr)
{
	(void)conn;
	(void)name;
	*value = NULL;
	if (fake.is_used_st != DB_OK) {
		*errstr = xstrdup("query failed: fake is_used error");
		return (fake.is_used_st);
	}
	if (fake.is_used_self)
		*value = xasprintf("%llu", fake.lock_session);
	else
		*value = fdup(fake.is_used);
	return (DB_OK);
}

/* The heartbeat's one statement: IS_USED_LOCK and the read-only flags. */
static enum db_status
f_lock_check(
    void *conn, const char *name, char **value, char **read_only, char **errstr)
{
	enum db_status st;

	fake.lock_checks++;
	*read_only = NULL;
	if ((st = f_is_used_lock(conn, name, value, errstr)) == DB_OK &&
	    fake.read_only != NULL)
		*read_only = xstrdup(fake.read_only);
	return (st);
}

static enum db_status
f_kill(void *conn, unsigned long long id, char **errstr)
{
	(void)conn;
	fake.kills++;
	fake.killed = id;
	if (fake.kill_st != DB_OK) {
		*errstr = xstrdup("query failed: fake kill error");
		return (fake.kill_st);
	}
	return (DB_OK);
}

static enum db_status
f_holder(void *conn, const char *name, struct lock_holder *h, char **errstr)
{
	(void)conn;
	(void)name;
	(void)errstr;
	fake.holder_calls++;
	*h = fake.holder;
	h->run_host =
	    fake.holder.run_host ? xstrdup(fake.holder.run_host) : NULL;
	h->run_job = NULL;
	h->started_at = NULL;
	h->client_host = NULL;
	h->client_user = NULL;
	return (DB_OK);
}

static enum db_status
f_run_start(void *conn, const struct run_start_info *ri, unsigned long long *id,
    char **errstr)
{
	(void)conn;
	(void)ri;
	(void)errstr;
	fake.run_starts++;
	*id = 42;
	return (DB_OK);
}

static enum db_status
f_run_heartbeat(void *conn, unsigned long long id, char **errstr)
{
	(void)conn;
	(void)id;
	(void)errstr;
	return (DB_OK);
}

static enum db_status
f_run_finish(void *conn, unsigned long long id, const char *outcome,
    int exit_status, const char *error, const struct run_output *output,
    char **errstr)
{
	(void)conn;
	(void)id;
	if (fake.finishes++ == 0)
		fake.releases_at_finish = fake.releases;
	snprintf(
	    fake.finish_outcome, sizeof fake.finish_outcome, "%s", outcome);
	fake.finish_status = exit_status;
	snprintf(fake.finish_error, sizeof fake.finish_error, "%s",
	    error != NULL ? error : "");
	fake.finish_had_output = output != NULL;
	if (fake.finish_fail_output && output != NULL) {
		*errstr = xstrdup("query failed: fake packet too large");
		return (DB_ERR_LOST);
	}
	if (fake.finish_st != DB_OK &&
	    (!fake.finish_fail_once || fake.finishes == 1)) {
		*errstr = xstrdup("query failed: fake finish error");
		return (fake.finish_st);
	}
	return (DB_OK);
}

static unsigned long long
f_connection_id(void *conn)
{
	return (((struct fake_conn *)conn)->id);
}

static enum db_status
f_kill_query(void *conn, unsigned long long id, char **errstr)
{
	(void)conn;
	(void)id;
	(void)errstr;
	return (DB_OK);
}

static enum db_status
f_exec_sql(void *conn, const char *sql, char **errstr)
{
	(void)conn;
	(void)sql;
	(void)errstr;
	return (DB_OK);
}

const struct lock_db_ops fake_ops = {
	.connect = f_connect,
	.destroy = f_destroy,
	.get_lock = f_get_lock,
	.release_lock = f_release_lock,
	.is_used_lock = f_is_used_lock,
	.lock_check = f_lock_check,
	.kill = f_kill,
	.holder = f_holder,
	.run_start = f_run_start,
	.run_heartbeat = f_run_heartbeat,
	.run_finish = f_run_finish,
	.connection_id = f_connection_id,
	.kill_query = f_kill_query,
	.exec_sql = f_exec_sql,
};

char fake_rundir[] = "/tmp/fakelock.XXXXXX";

void
fake_setup(void)
{
	memset(&fake, 0, sizeof fake);
	fake.get_lock = V("1");
	fake.release = V("1");
	fake.wsrep = "0";
	fake.is_used = VNULL;
	fake_nseen = 0;
	log_init(LOG_ERROR, LOG_TEXT);
	incident_set_sink(sink, NULL);
	ck_assert_ptr_nonnull(mkdtemp(fake_rundir));
}

void
fake_teardown(void)
{
	incident_set_sink(NULL, NULL);
	testutil_rmdir(fake_rundir);
}
