/* cmd-doctor.c: "doctor", the preflight checks (doctor.c), printed by
 * report_doctor: the verdict first, then a line each, or as JSON; the exit
 * code is the worst status. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "doctor.h"
#include "util.h"

static const struct cmd_option cmd_doctor_options[] = {
	{ "format", 1 },
	{ NULL, 0 },
};

/* Secrets that are there but unusable (an empty file, a signing secret
 * that does not decode) are a configuration error, as for config check:
 * 78, said once.  One that cannot be read is a finding (channel_secret):
 * this host may not be one that sends. */
static int
cmd_doctor_secrets(struct conf *c)
{
	char  *errstr = NULL;
	size_t i;

	for (i = 0; i < c->nchannels; i++) {
		if (conf_read_secrets(c, c->channels[i].name, &errstr) == -2)
			goto bad;
		free(errstr);
		errstr = NULL;
	}
	for (i = 0; i < c->njobs; i++) {
		if (conf_read_job_secrets(c, c->jobs[i].name, &errstr) == -2)
			goto bad;
		free(errstr);
		errstr = NULL;
	}
	return 0;
bad:
	fprintf(stderr, "cronguard: %s\n", errstr);
	free(errstr);
	return EXIT_CONFIG;
}

static int
cmd_doctor_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct doctor_report r;
	enum report_format   fmt = REPORT_NAGIOS;
	const char          *v = cmd_opt_value(ctx, "format");
	struct db           *db = NULL;
	char                *errstr = NULL, *text;
	int                  rc;

	if (v != NULL &&
	    (report_format_parse(v, &fmt) != 0 || fmt == REPORT_PROMETHEUS))
		return cmd_usage_error(
		    ctx->entry, "--format: \"%s\" is not nagios or json", v);

	if ((rc = cmd_doctor_secrets(c)) != 0)
		return rc;
	if (db_connect(&c->db, &db, &errstr) != DB_OK)
		db = NULL;
	doctor_run(db, errstr, c, &r);

	text = report_doctor(fmt, &r);
	fputs(text, stdout);
	free(text);
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
