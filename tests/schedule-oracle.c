/*
 * schedule-oracle.c: the evaluator for tests/integration/t1000: reads
 * lines "expr<TAB>zone<TAB>unix_t" on stdin and prints, for each,
 * "prev<TAB>next" (Unix seconds, "-" when there is none) or
 * "error<TAB>message".
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"
#include "util.h"

static void
oracle_line(char *line)
{
	struct schedule *s = NULL;
	struct tzone    *z = NULL;
	char            *zone, *ts, *err = NULL;
	const char      *why;
	long long        t;
	int64_t          prev, next;

	if ((zone = strchr(line, '\t')) == NULL ||
	    (ts = strchr(zone + 1, '\t')) == NULL) {
		printf("error\tnot expr<TAB>zone<TAB>unix_t\n");
		return;
	}
	*zone++ = '\0';
	*ts++ = '\0';
	if (parse_ll(ts, INT64_MIN / 2, INT64_MAX / 2, &t, &why) == -1) {
		printf("error\tunix_t: %s\n", why);
		return;
	}
	if (schedule_parse(line, &s, &err) == -1 ||
	    tzone_open(zone, &z, &err) == -1) {
		printf("error\t%s\n", err);
		goto out;
	}
	if (schedule_prev(s, z, t, &prev) == 0)
		printf("%lld", (long long)prev);
	else
		printf("-");
	if (schedule_next(s, z, t, &next) == 0)
		printf("\t%lld\n", (long long)next);
	else
		printf("\t-\n");
out:
	free(err);
	schedule_free(s);
	tzone_free(z);
}

int
main(void)
{
	char   *line = NULL;
	size_t  cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, stdin)) != -1) {
		if (n > 0 && line[n - 1] == '\n')
			line[n - 1] = '\0';
		oracle_line(line);
	}
	free(line);
	return 0;
}
