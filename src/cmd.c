/* cmd.c: the command table and the argument handling every command shares. */
#include "config.h"

#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "duration.h"
#include "guard.h"
#include "incident.h"
#include "jobctl.h"
#include "log.h"
#include "migrate.h"
#include "outbox-admin.h"
#include "util.h"

extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_exec_entry;
extern const struct cmd_entry cmd_jobs_list_entry;
extern const struct cmd_entry cmd_jobs_crontab_entry;
extern const struct cmd_entry cmd_jobs_check_entry;
extern const struct cmd_entry cmd_jobs_runs_entry;
extern const struct cmd_entry cmd_jobs_show_entry;
extern const struct cmd_entry cmd_jobs_purge_entry;
extern const struct cmd_entry cmd_jobs_pause_entry;
extern const struct cmd_entry cmd_jobs_resume_entry;
extern const struct cmd_entry cmd_jobs_ack_entry;
extern const struct cmd_entry cmd_locks_entry;
extern const struct cmd_entry cmd_status_entry;
extern const struct cmd_entry cmd_schedule_next_entry;
extern const struct cmd_entry cmd_outbox_dispatch_entry;
extern const struct cmd_entry cmd_outbox_check_entry;
extern const struct cmd_entry cmd_outbox_list_entry;
extern const struct cmd_entry cmd_outbox_show_entry;
extern const struct cmd_entry cmd_outbox_retry_entry;
extern const struct cmd_entry cmd_outbox_purge_entry;
extern const struct cmd_entry cmd_outbox_cancel_entry;
extern const struct cmd_entry cmd_outbox_pause_entry;
extern const struct cmd_entry cmd_outbox_resume_entry;
extern const struct cmd_entry cmd_outbox_enqueue_entry;
extern const struct cmd_entry cmd_db_migrate_entry;
extern const struct cmd_entry cmd_db_status_entry;
extern const struct cmd_entry cmd_doctor_entry;
extern const struct cmd_entry cmd_config_check_entry;
extern const struct cmd_entry cmd_version_entry;
extern const struct cmd_entry cmd_help_entry;
extern const struct cmd_entry cmd_completion_entry;
extern const struct cmd_entry cmd_completion_names_entry;

const struct cmd_entry *const cmd_table[] = {
	&cmd_run_entry,
	&cmd_exec_entry,
	&cmd_jobs_list_entry,
	&cmd_jobs_crontab_entry,
	&cmd_jobs_check_entry,
	&cmd_jobs_runs_entry,
	&cmd_jobs_show_entry,
	&cmd_jobs_purge_entry,
	&cmd_jobs_pause_entry,
	&cmd_jobs_resume_entry,
	&cmd_jobs_ack_entry,
	&cmd_locks_entry,
	&cmd_status_entry,
	&cmd_schedule_next_entry,
	&cmd_outbox_dispatch_entry,
	&cmd_outbox_check_entry,
	&cmd_outbox_list_entry,
	&cmd_outbox_show_entry,
	&cmd_outbox_retry_entry,
	&cmd_outbox_cancel_entry,
	&cmd_outbox_pause_entry,
	&cmd_outbox_resume_entry,
	&cmd_outbox_purge_entry,
	&cmd_outbox_enqueue_entry,
	&cmd_db_migrate_entry,
	&cmd_db_status_entry,
	&cmd_doctor_entry,
	&cmd_config_check_entry,
	&cmd_version_entry,
	&cmd_help_entry,
	&cmd_completion_entry,
	&cmd_completion_names_entry,
	NULL,
};

/* getopt_long's value for template option i: above every char. */
#define CMD_OPT_VAL(i) (256 + (i))

void
cmd_usage(const struct cmd_entry *e, FILE *f)
{
	fprintf(f, "usage: %s %s%s%s\n", CMD_GLOBAL_USAGE, e->name,
	    e->usage[0] != '\0' ? " " : "", e->usage);
}

int
cmd_usage_error(const struct cmd_entry *e, const char *fmt, ...)
{
	va_list ap;

	fputs("cronguard: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cmd_usage(e, stderr);
	return EXIT_USAGE;
}

void
cmd_option_error(int ch, const char *opt, int optopt)
{
	const char *eq;
	int         len;

	if (opt == NULL || strncmp(opt, "--", 2) != 0) {
		fprintf(stderr,
		    ch == ':' ? "cronguard: option '-%c' needs a value\n"
		              : "cronguard: unknown option '-%c'\n",
		    optopt > 0 && optopt < 256 ? optopt : '?');
		return;
	}
	eq = strchr(opt, '=');
	len = eq != NULL ? (int)(eq - opt) : (int)strlen(opt);
	fprintf(stderr,
	    ch == ':' ? "cronguard: option '%.*s' needs a value\n"
	              : "cronguard: unknown option '%.*s'\n",
	    len, opt);
}

/* 1 if argv holds --help before "--" (then usage is printed). */
static int
cmd_wants_help(const struct cmd_entry *e, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0) {
			cmd_usage(e, stdout);
			if (e->summary != NULL)
				printf("\n%s\n", e->summary);
			return 1;
		}
	}
	return 0;
}

/* Parse ctx->argv by the entry's template into ctx->opts and the
 * operands ctx->args (allocated: cmd_run frees it).  Options may come
 * before, between or after the operands ("jobs runs JOB --limit 5")
 * unless the entry is CMD_OPTIONS_FIRST; "--" ends the options either
 * way.  getopt_long returns each operand in turn ("-" first in the
 * option string), so the order does not hang on POSIXLY_CORRECT.
 * Returns 0 or EXIT_USAGE (printed). */
static int
cmd_parse(struct cmd_ctx *ctx)
{
	const struct cmd_entry *e = ctx->entry;
	struct option           longopts[CMD_OPTIONS_MAX + 1];
	struct cmd_optval      *ov;
	int                     ch, n;

	memset(longopts, 0, sizeof longopts);
	for (n = 0; e->options != NULL && e->options[n].name != NULL; n++) {
		if (n == CMD_OPTIONS_MAX) {
			/* A bug, caught by t0100 (every command's --bogus). */
			fprintf(stderr, "cronguard: %s: more than %d options\n",
			    e->name, CMD_OPTIONS_MAX);
			abort();
		}
		longopts[n].name = e->options[n].name;
		longopts[n].has_arg =
		    e->options[n].has_arg ? required_argument : no_argument;
		longopts[n].val = CMD_OPT_VAL(n);
	}
	ctx->args = xcalloc((size_t)ctx->argc + 1, sizeof *ctx->args);
	ctx->nargs = 0;
	optind = 0; /* glibc: full re-initialisation */
	opterr = 0;
	while ((ch = getopt_long(ctx->argc, ctx->argv,
	            e->flags & CMD_OPTIONS_FIRST ? "+:" : "-:", longopts,
	            NULL)) != -1) {
		if (ch == 1) { /* an operand, in its place */
			ctx->args[ctx->nargs++] = optarg;
			continue;
		}
		if (ch < CMD_OPT_VAL(0) || ch >= CMD_OPT_VAL(n)) {
			cmd_option_error(ch, ctx->argv[optind - 1], optopt);
			cmd_usage(e, stderr);
			return EXIT_USAGE;
		}
		ov = &ctx->opts[ch - CMD_OPT_VAL(0)];
		ov->v = xreallocarray(ov->v, ov->n + 1, sizeof *ov->v);
		ov->v[ov->n++] = optarg;
	}
	while (optind < ctx->argc) /* after "--", or the first operand */
		ctx->args[ctx->nargs++] = ctx->argv[optind++];
	if (ctx->nargs < e->min_args)
		return cmd_usage_error(e, "missing argument");
	if (e->max_args >= 0 && ctx->nargs > e->max_args)
		return cmd_usage_error(
		    e, "unexpected argument '%s'", ctx->args[e->max_args]);
	return 0;
}

/* Index of option name in the template: a name not in it is a bug. */
static int
cmd_opt_index(const struct cmd_ctx *ctx, const char *name)
{
	const struct cmd_option *o = ctx->entry->options;
	int                      i;

	for (i = 0; o != NULL && o[i].name != NULL; i++) {
		if (strcmp(o[i].name, name) == 0)
			return i;
	}
	fprintf(stderr, "cronguard: %s: no option --%s in its template\n",
	    ctx->entry->name, name);
	abort();
}

size_t
cmd_opt_count(const struct cmd_ctx *ctx, const char *name)
{
	return ctx->opts[cmd_opt_index(ctx, name)].n;
}

const char *
cmd_opt_value(const struct cmd_ctx *ctx, const char *name)
{
	const struct cmd_optval *ov = &ctx->opts[cmd_opt_index(ctx, name)];

	return ov->n > 0 ? ov->v[ov->n - 1] : NULL;
}

const char *const *
cmd_opt_values(const struct cmd_ctx *ctx, const char *name, size_t *n)
{
	const struct cmd_optval *ov = &ctx->opts[cmd_opt_index(ctx, name)];

	*n = ov->n;
	return ov->v;
}

/* Load the configuration into c, printing the error.  Returns 0 or
 * EXIT_CONFIG. */
static int
cmd_load_conf(struct cmd_ctx *ctx, struct conf *c)
{
	char *errstr = NULL;

	if (conf_load(ctx->conf_path, c, &errstr) != 0 &&
	    (ctx->entry->flags & CMD_CHECK_CONF)) {
		conf_defaults(c);
		ctx->conf_error = errstr;
		return 0;
	}
	if (errstr != NULL) {
		fprintf(stderr, "cronguard: %s\n", errstr);
		free(errstr);
		return EXIT_CONFIG;
	}
	incident_set_alert(c->alert_url, (long)c->alert_timeout_ms);
	if ((ctx->entry->flags & CMD_NEEDS_DB) == CMD_NEEDS_DB &&
	    !c->have_database) {
		fprintf(stderr, "cronguard: %s: no database section\n",
		    c->path != NULL ? c->path : ctx->conf_path);
		return EXIT_CONFIG;
	}
	return 0;
}

const struct cmd_option cmd_check_template[] = {
	{ "format", 1 },
	{ "metrics-file", 1 },
	{ NULL, 0 },
};

int
cmd_check_options(
    struct cmd_ctx *ctx, enum report_format *fmt, const char **metrics)
{
	const char *v;

	*fmt = REPORT_NAGIOS;
	if ((v = cmd_opt_value(ctx, "format")) != NULL &&
	    report_format_parse(v, fmt) != 0)
		return cmd_usage_error(
		    ctx->entry, "--format must be nagios, json or prometheus");
	*metrics = cmd_opt_value(ctx, "metrics-file");
	return 0;
}

const struct cmd_option cmd_format_template[] = {
	{ "format", 1 },
	{ NULL, 0 },
};

int
cmd_format_option(struct cmd_ctx *ctx, int *json)
{
	const char *v;

	*json = 0;
	if ((v = cmd_opt_value(ctx, "format")) == NULL ||
	    strcmp(v, "text") == 0)
		return 0;
	if (strcmp(v, "json") == 0) {
		*json = 1;
		return 0;
	}
	return cmd_usage_error(ctx->entry, "--format must be text or json");
}

int
cmd_format_check(struct cmd_ctx *ctx, const struct conf *c)
{
	return cmd_format_option(ctx, ctx->state);
}

int
cmd_migrations_check(struct cmd_ctx *ctx, const struct conf *c)
{
	char *errstr = NULL;

	if (migrate_scan(migrate_sqldir(), ctx->state, &errstr) == 0)
		return 0;
	fprintf(stderr, "cronguard: %s\n", errstr);
	free(errstr);
	return EXIT_SOFTWARE;
}

void
cmd_migrations_free(void *set)
{
	migrate_set_free(set);
}

int
cmd_stdout_done(struct cmd_ctx *ctx)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "cronguard: %s: cannot write to stdout\n",
		    ctx->entry->name);
		return EXIT_SOFTWARE;
	}
	return EXIT_OK;
}

int
cmd_db_error(struct cmd_ctx *ctx, enum db_status st, const char *errstr)
{
	fprintf(stderr, "cronguard: %s: %s\n", ctx->entry->name,
	    errstr != NULL ? errstr : "failed");
	return exitcode_db(st);
}

/* CMD_OPENS_DB: ctx->db connected to c's database, with
 * db_connect_primary unless the entry is CMD_READS_ONLY; none without a
 * database section.  Returns 0, or the exit code after cmd_db_error. */
static int
cmd_db_open(struct cmd_ctx *ctx, struct conf *c)
{
	enum db_status st;
	char          *errstr = NULL;
	int            rc = 0;

	if (!c->have_database)
		return 0;
	if ((ctx->entry->flags & CMD_READS_ONLY)
	        ? (st = db_connect(&c->db, &ctx->db, &errstr)) != DB_OK
	        : (st = db_connect_primary(&c->db, &ctx->db, &errstr)) != DB_OK)
		rc = cmd_db_error(ctx, st, errstr);
	free(errstr);
	return rc;
}

int
cmd_run(const struct cmd_entry *e, const char *conf_path, int argc, char **argv)
{
	struct cmd_ctx ctx;
	struct conf    c;
	int            i, rc;

	memset(&ctx, 0, sizeof ctx);
	ctx.conf_path = conf_path;
	ctx.entry = e;
	ctx.argc = argc;
	ctx.argv = argv;
	if (cmd_wants_help(e, argc, argv))
		return EXIT_OK;

	conf_defaults(&c);
	rc = cmd_parse(&ctx);
	if (rc == 0 && (e->flags & CMD_NEEDS_CONF))
		rc = cmd_load_conf(&ctx, &c);
	if (rc == 0 && e->state_size > 0)
		ctx.state = xcalloc(1, e->state_size);
	if (rc == 0 && e->check != NULL)
		rc = e->check(&ctx, &c);
	if (rc == 0 && (e->flags & CMD_OPENS_DB))
		rc = cmd_db_open(&ctx, &c);
	if (rc == 0)
		rc = e->exec(&ctx, &c);
	db_close(ctx.db);
	if (ctx.state != NULL && e->state_free != NULL)
		e->state_free(ctx.state);
	free(ctx.state);
	for (i = 0; i < CMD_OPTIONS_MAX; i++)
		free(ctx.opts[i].v);
	free(ctx.args);
	free(ctx.conf_error);
	conf_free(&c);
	incident_set_alert(NULL, 0);
	return rc;
}

static sigset_t cmd_signals_saved;
static bool     cmd_signals_held;

void
cmd_signals_hold(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2,
		SIGPIPE };
	sigset_t         set;
	size_t           i;

	sigemptyset(&set);
	for (i = 0; i < nitems(sigs); i++)
		sigaddset(&set, sigs[i]);
	if (sigprocmask(SIG_BLOCK, &set, &cmd_signals_saved) == 0)
		cmd_signals_held = true;
}

void
cmd_signals_release(void)
{
	if (!cmd_signals_held)
		return;
	cmd_signals_held = false;
	sigprocmask(SIG_SETMASK, &cmd_signals_saved, NULL);
}

int
cmd_parse_ids(struct cmd_ctx *ctx, unsigned long long **ids, size_t *nids)
{
	unsigned long long id;
	const char        *e;
	size_t             i;
	int                a;

	*nids = 0;
	*ids = xcalloc((size_t)ctx->nargs + 1, sizeof **ids);
	for (a = 0; a < ctx->nargs; a++) {
		if (parse_ull(ctx->args[a], UINT64_MAX, &id, &e) != 0) {
			free(*ids);
			*ids = NULL;
			return cmd_usage_error(
			    ctx->entry, "bad id %s: %s", ctx->args[a], e);
		}
		for (i = 0; i < *nids && (*ids)[i] != id; i++)
			;
		if (i == *nids)
			(*ids)[(*nids)++] = id;
	}
	return 0;
}

int
cmd_ids_changed(
    struct cmd_ctx *ctx, unsigned long long n, size_t nids, const char *states)
{
	if (n == nids)
		return 0;
	fprintf(stderr,
	    "cronguard: %s: %llu of %zu ids are not %s messages (see outbox "
	    "show)\n",
	    ctx->entry->name, (unsigned long long)nids - n, nids, states);
	return EXIT_DATAERR;
}

int
cmd_run_job(
    const struct guard_job *gj, const struct lock_db_ops *ops, void *ctx)
{
	struct guard_result res;
	const char         *p;
	size_t              len;
	int                 code;

	code = guard_run(gj, ops, ctx, &res);
	if (res.captured &&
	    (gj->output == OUTPUT_CAPTURE ||
	        (gj->output == OUTPUT_ON_FAILURE && res.failed))) {
		p = output_tail(&res.output, &len);
		if (res.output.total > len)
			printf("[cronguard: output truncated: the last %zu of "
			       "%llu bytes follow]\n",
			    len, res.output.total);
		if (len > 0)
			fwrite(p, 1, len, stdout);
		fflush(stdout);
	}
	guard_result_free(&res);
	return code;
}

int
cmd_jobs_known(struct cmd_ctx *ctx, const struct conf *c)
{
	int i;

	for (i = 0; i < ctx->nargs; i++) {
		if (conf_job_find(c, ctx->args[i]) == NULL)
			return cmd_usage_error(ctx->entry,
			    "no job \"%s\" in %s", ctx->args[i], c->path);
	}
	return 0;
}

int
cmd_text_option(struct cmd_ctx *ctx, const char *name, int required, size_t max,
    const char **value)
{
	const char *v = cmd_opt_value(ctx, name);

	*value = v;
	if (v == NULL && required)
		return cmd_usage_error(ctx->entry, "--%s is required", name);
	if (v == NULL)
		return 0;
	if (v[0] == '\0')
		return cmd_usage_error(ctx->entry, "--%s is empty", name);
	if (strlen(v) > max)
		return cmd_usage_error(ctx->entry,
		    "--%s is %zu bytes, more than the limit of %zu", name,
		    strlen(v), max);
	if (!utf8_valid(v))
		return cmd_usage_error(
		    ctx->entry, "--%s is not valid UTF-8", name);
	return 0;
}

int
cmd_reason_option(
    struct cmd_ctx *ctx, int required, size_t max, const char **reason)
{
	return cmd_text_option(ctx, "reason", required, max, reason);
}

int
cmd_outbox_filter(
    struct cmd_ctx *ctx, struct outbox_filter *f, int *any, int *dry_run)
{
	const char *v, *e;
	int         rc;

	memset(f, 0, sizeof *f);
	if ((rc = cmd_text_option(
	         ctx, "channel", 0, CMD_FILTER_MAX, &f->channel)) != 0 ||
	    (rc = cmd_text_option(
	         ctx, "event-type", 0, CMD_FILTER_MAX, &f->event_type)) != 0 ||
	    (rc = cmd_text_option(
	         ctx, "error", 0, CMD_FILTER_MAX, &f->error)) != 0)
		return rc;
	if ((v = cmd_opt_value(ctx, "since")) != NULL &&
	    duration_parse(v, &f->since_ms, &e) != 0)
		return cmd_usage_error(ctx->entry, "--since: %s: %s", v, e);
	if (v != NULL && f->since_ms <= 0)
		return cmd_usage_error(
		    ctx->entry, "--since: %s: must be more than 0", v);
	*dry_run = cmd_opt_count(ctx, "dry-run") > 0;
	*any = f->channel != NULL || f->event_type != NULL ||
	    f->error != NULL || v != NULL;
	return 0;
}
