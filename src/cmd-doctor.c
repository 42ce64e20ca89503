/* cmd-doctor.c: "doctor", the preflight checks (doctor.c) printed one line
 * each, or as JSON; the exit code is the worst status. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd.h"
#include "doctor.h"
#include "util.h"

static const struct cmd_option cmd_doctor_options[] = {
	{ "format", 1 },
	{ NULL, 0 },
};

static void
cmd_doctor_json(const struct doctor_report *r)
{
	const struct doctor_result *d;
	json_t                     *root, *checks, *o;
	char                       *text;
	size_t                      i;

	root = json_object();
	json_object_set_new(
	    root, "status", json_string(check_status_name(r->worst)));
	checks = json_array();
	for (i = 0; i < r->n; i++) {
		d = &r->v[i];
		o = json_object();
		json_object_set_new(o, "name", json_string(d->name));
		json_object_set_new(
		    o, "status", json_string(check_status_name(d->status)));
		json_object_set_new(o, "finding", json_string(d->finding));
		json_object_set_new(o, "fix",
		    d->fix != NULL ? json_string(d->fix) : json_null());
		json_array_append_new(checks, o);
	}
	json_object_set_new(root, "checks", checks);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("%s\n", text != NULL ? text : "{}");
	free(text);
	json_decref(root);
}

static int
cmd_doctor_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct doctor_report r;
	enum report_format   fmt = REPORT_NAGIOS;
	const char          *v = cmd_opt_value(ctx, "format");
	struct db           *db = NULL;
	char                *errstr = NULL;
	size_t               i;
	int                  rc;

	if (v != NULL &&
	    (report_format_parse(v, &fmt) != 0 || fmt == REPORT_PROMETHEUS))
		return cmd_usage_error(
		    ctx->entry, "--format: \"%s\" is not nagios or json", v);

	if (db_connect(&c->db, &db, &errstr) != DB_OK)
		db = NULL;
	doctor_run(db, errstr, c, &r);

	if (fmt == REPORT_JSON)
		cmd_doctor_json(&r);
	else
		for (i = 0; i < r.n; i++)
			printf("%s %s: %s%s%s\n",
			    check_status_name(r.v[i].status), r.v[i].name,
			    r.v[i].finding, r.v[i].fix != NULL ? "; fix: " : "",
			    r.v[i].fix != NULL ? r.v[i].fix : "");

	rc = exitcode_check(r.worst);
	db_close(db);
	free(errstr);
	doctor_report_free(&r);
	return rc;
}

const struct cmd_entry cmd_doctor_entry = {
	.name = "doctor",
	.usage = "[--format nagios|json]",
	.summary =
	    "Preflight: the server and SKIP LOCKED, the claim index, session timeouts\nagainst heartbeats, Galera, isolation, clocks, migrations, privileges, the jobs'\ntime zones, file permissions, and each channel and the alert URL (DNS, TCP, TLS, SMTP EHLO/AUTH, HTTP HEAD,\nAMQP login; nothing sent, 5 s at most each).\nExit 0 OK, 1 WARNING, 2 CRITICAL, 3 database unreachable.",
	.options = cmd_doctor_options,
	.flags = CMD_NEEDS_DB,
	.exec = cmd_doctor_exec,
};
