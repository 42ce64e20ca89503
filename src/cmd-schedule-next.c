/* cmd-schedule-next.c: "schedule next", the next slots of an expression,
 * with no configuration and no database. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cmd.h"
#include "report.h"
#include "schedule.h"
#include "util.h"

/* The most slots one call lists. */
#define SCHEDULE_NEXT_MAX 10000

static const struct cmd_option schedule_next_options[] = {
	{ "tz", 1 },
	{ "from", 1 },
	{ "count", 1 },
	{ "format", 1 },
	{ NULL, 0 },
};

/* The slots as RFC 3339 text, one a line or as JSON, on stdout. */
static void
schedule_next_print(const struct schedule *s, const struct tzone *z,
    int64_t from, const int64_t *slots, size_t n, int json)
{
	char(*text)[TZONE_RFC3339_MAX], fromtext[TZONE_RFC3339_MAX];
	const char **list;
	char        *doc;
	size_t       i;

	text = xcalloc(n + 1, sizeof *text);
	list = xcalloc(n + 1, sizeof *list);
	for (i = 0; i < n; i++) {
		tzone_format(z, slots[i], text[i], sizeof text[i]);
		list[i] = text[i];
	}
	if (json) {
		tzone_format(z, from, fromtext, sizeof fromtext);
		doc = report_schedule_next_json(
		    schedule_text(s), tzone_name(z), fromtext, list, n);
		fputs(doc, stdout);
		free(doc);
	} else {
		for (i = 0; i < n; i++)
			printf("%s\n", list[i]);
	}
	free(list);
	free(text);
}

static int
cmd_schedule_next_exec(struct cmd_ctx *ctx, struct conf *c)
{
	struct schedule *s = NULL;
	struct tzone    *z = NULL;
	const char      *v, *why;
	char            *errstr = NULL;
	int64_t          from, *slots = NULL;
	long long        count = 1;
	size_t           n;
	int              json, rc = EXIT_USAGE;

	(void)c;
	if (cmd_format_option(ctx, &json) != 0)
		return EXIT_USAGE;
	if ((v = cmd_opt_value(ctx, "count")) != NULL &&
	    parse_ll(v, 1, SCHEDULE_NEXT_MAX, &count, &why) != 0)
		return cmd_usage_error(ctx->entry, "--count %s: %s", v, why);
	if (schedule_parse(ctx->args[0], &s, &errstr) == -1) {
		fprintf(stderr, "cronguard: schedule next: %s\n", errstr);
		goto out;
	}
	if (((v = cmd_opt_value(ctx, "tz")) != NULL
	            ? tzone_open(v, &z, &errstr)
	            : tzone_open_host(&z, &errstr)) == -1) {
		fprintf(stderr, "cronguard: schedule next: %s\n", errstr);
		goto out;
	}
	from = (int64_t)time(NULL);
	if ((v = cmd_opt_value(ctx, "from")) != NULL &&
	    tzone_parse(z, v, &from, &errstr) == -1) {
		fprintf(
		    stderr, "cronguard: schedule next: --from: %s\n", errstr);
		goto out;
	}
	slots = xcalloc((size_t)count, sizeof *slots);
	n = schedule_upcoming(s, z, from, slots, (size_t)count);
	schedule_next_print(s, z, from, slots, n, json);
	rc = cmd_stdout_done(ctx);
out:
	free(slots);
	free(errstr);
	tzone_free(z);
	schedule_free(s);
	return rc;
}

const struct cmd_entry cmd_schedule_next_entry = {
	.name = "schedule next",
	.usage = "[--tz zone] [--from time] [--count n] [--format text|json] "
	         "expression",
	.summary =
	    "Print the next slots of a schedule expression after now (or --from), one RFC 3339 time a line with the zone's offset; needs no configuration or database.",
	.options = schedule_next_options,
	.min_args = 1,
	.max_args = 1,
	.flags = 0,
	.exec = cmd_schedule_next_exec,
};
