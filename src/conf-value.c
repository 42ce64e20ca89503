/*
 * conf-value.c: one setting of the configuration: where it is (its key
 * path, its file), the errors and warnings about it, and its value as the
 * type its key wants (string, enum, duration, integer, size, number, list
 * of strings).  doc/architecture.md places it.
 */
#include "config.h"

#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf-int.h"
#include "duration.h"
#include "util.h"

/* "database.tls.mode", "jobs.x.command[1]": the setting's key path. */
static void
conf_key_path(const config_setting_t *s, struct buf *b)
{
	const config_setting_t *parent;
	const char             *name;

	if (s == NULL || (parent = config_setting_parent(s)) == NULL)
		return;
	conf_key_path(parent, b);
	if ((name = config_setting_name(s)) != NULL) {
		if (b->len > 0)
			buf_addc(b, '.');
		buf_adds(b, name);
	} else
		buf_printf(b, "[%d]", config_setting_index(s));
}

/* The file a setting came from (allocated): the configuration itself, or
 * an @include'd file, which libconfig names relative to the include
 * directory. */
char *
conf_resolve(struct parse *p, const char *file)
{
	if (file == NULL || strcmp(file, p->path) == 0 ||
	    (p->abspath != NULL && strcmp(file, p->abspath) == 0))
		return xstrdup(p->path);
	if (*file == '/' || p->dir == NULL)
		return xstrdup(file);
	return xasprintf("%s/%s", p->dir, file);
}

char *
conf_source_file(struct parse *p, const config_setting_t *s)
{
	return conf_resolve(
	    p, s != NULL ? config_setting_source_file(s) : NULL);
}

/* Record "file:line: msg" for setting s (the first error only). */
int __attribute__((format(printf, 3, 4)))
conf_error(struct parse *p, const config_setting_t *s, const char *fmt, ...)
{
	va_list ap;
	char   *msg, *file;
	int     line = 0;

	if (p->err != NULL)
		return -1;
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (s != NULL)
		line = config_setting_source_line(s);
	file = conf_source_file(p, s);
	p->err = xasprintf("%s:%d: %s", file, line, msg);
	free(file);
	free(msg);
	return -1;
}

/* "file:line: outbox.lease" for setting s (allocated). */
char *
conf_where(struct parse *p, const config_setting_t *s)
{
	struct buf b;
	char      *file, *where;

	buf_init(&b);
	conf_key_path(s, &b);
	file = conf_source_file(p, s);
	where = xasprintf("%s:%d: %s", file,
	    s != NULL ? config_setting_source_line(s) : 0,
	    b.data != NULL ? b.data : "");
	free(file);
	buf_free(&b);
	return where;
}

/* Same, naming the key first: "file:line: outbox.lease: msg". */
int __attribute__((format(printf, 3, 4)))
conf_key_error(struct parse *p, const config_setting_t *s, const char *fmt, ...)
{
	va_list ap;
	char   *msg, *where;

	if (p->err != NULL)
		return -1;
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	where = conf_where(p, s);
	p->err = xasprintf("%s: %s", where, msg);
	free(where);
	free(msg);
	return -1;
}

/* A warning for config check, "file:line: key: msg"; loading goes on. */
void __attribute__((format(printf, 3, 4)))
conf_key_warn(struct parse *p, const config_setting_t *s, const char *fmt, ...)
{
	struct conf *c = p->c;
	va_list      ap;
	char        *msg, *where;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	where = conf_where(p, s);
	c->warnings =
	    xreallocarray(c->warnings, c->nwarnings + 1, sizeof *c->warnings);
	c->warnings[c->nwarnings++] = xasprintf("%s: %s", where, msg);
	free(where);
	free(msg);
}

static const char *
conf_type_name(const config_setting_t *s)
{
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_GROUP:
		return "a group";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		return "an integer";
	case CONFIG_TYPE_FLOAT:
		return "a number";
	case CONFIG_TYPE_STRING:
		return "a string";
	case CONFIG_TYPE_BOOL:
		return "a boolean";
	case CONFIG_TYPE_ARRAY:
		return "an array";
	case CONFIG_TYPE_LIST:
		return "a list";
	}
	return "something else";
}

int
conf_wrong_type(struct parse *p, const config_setting_t *s, const char *want)
{
	return conf_key_error(
	    p, s, "expected %s, not %s", want, conf_type_name(s));
}

static int
conf_is_int(const config_setting_t *s)
{
	return config_setting_type(s) == CONFIG_TYPE_INT ||
	    config_setting_type(s) == CONFIG_TYPE_INT64;
}

static const char *
conf_has_control(const char *v, int allow_newlines)
{
	const unsigned char *u;

	for (u = (const unsigned char *)v; *u != '\0'; u++) {
		if (allow_newlines && (*u == '\n' || *u == '\t' || *u == '\r'))
			continue;
		if (*u < 0x20 || *u == 0x7f)
			return (const char *)u;
	}
	return NULL;
}

/* A string setting: must be a non-empty string without control
 * characters (they would end up in headers, logs and lock names). */
const char *
conf_get_string(struct parse *p, const config_setting_t *s, int multiline)
{
	const char *v;

	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		conf_wrong_type(p, s, "a string");
		return NULL;
	}
	v = config_setting_get_string(s);
	if (v == NULL || *v == '\0') {
		conf_key_error(p, s, "must not be empty");
		return NULL;
	}
	if (conf_has_control(v, multiline) != NULL) {
		conf_key_error(p, s, "contains a control character");
		return NULL;
	}
	return v;
}

static void
conf_join_values(const char *const *values, struct buf *b)
{
	size_t i;

	for (i = 0; values[i] != NULL; i++) {
		if (i > 0)
			buf_adds(b, values[i + 1] == NULL ? " or " : ", ");
		buf_adds(b, values[i]);
	}
}

int
conf_get_enum(
    struct parse *p, const config_setting_t *s, const char *const *values)
{
	const char *v;
	struct buf  b;
	int         i;

	if ((v = conf_get_string(p, s, 0)) == NULL)
		return -1;
	for (i = 0; values[i] != NULL; i++) {
		if (strcmp(v, values[i]) == 0)
			return i;
	}
	buf_init(&b);
	conf_join_values(values, &b);
	conf_key_error(p, s, "invalid value \"%s\" (expected %s)", v, b.data);
	buf_free(&b);
	return -1;
}

int
conf_get_duration(struct parse *p, const config_setting_t *s,
    const struct key *k, int64_t *out)
{
	const char *why;
	char        min[32];
	long long   secs;
	int64_t     ms;

	if (conf_is_int(s)) {
		secs = config_setting_get_int64(s);
		if (secs < 0)
			return conf_key_error(
			    p, s, "bad duration %lld: negative", secs);
		if (secs > DURATION_MAX_MS / 1000)
			return conf_key_error(
			    p, s, "bad duration %lld: too large", secs);
		ms = secs * 1000;
	} else if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		if (duration_parse(config_setting_get_string(s), &ms, &why) ==
		    -1)
			return conf_key_error(p, s, "bad duration \"%s\": %s",
			    config_setting_get_string(s), why);
	} else
		return conf_wrong_type(p, s,
		    "a duration (\"250ms\", \"30s\", \"5m\", \"1h\", \"7d\" or bare seconds)");
	if (ms < k->min) {
		duration_format(k->min, min, sizeof min);
		return conf_key_error(p, s, "must be at least %s", min);
	}
	if (k->max > 0 && ms > k->max) {
		duration_format(k->max, min, sizeof min);
		return conf_key_error(p, s, "must be at most %s", min);
	}
	*out = ms;
	return 0;
}

int
conf_get_integer(struct parse *p, const config_setting_t *s,
    const struct key *k, long long *out)
{
	long long v;

	/* -1 spelled out: callers read *out exactly when this returns 0. */
	if (!conf_is_int(s)) {
		conf_wrong_type(p, s, "an integer");
		return -1;
	}
	v = config_setting_get_int64(s);
	if (v < k->min || v > k->max) {
		conf_key_error(
		    p, s, "%lld is out of range %lld..%lld", v, k->min, k->max);
		return -1;
	}
	*out = v;
	return 0;
}

/* A size: an integer (bytes) or a string "64K", "1M" (KiB, MiB). */
int
conf_get_size(struct parse *p, const config_setting_t *s, const struct key *k,
    long long *out)
{
	const char *v, *e;
	char        num[32];
	size_t      n;
	long long   mul = 1, x;

	if (conf_is_int(s))
		return conf_get_integer(p, s, k, out);
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return conf_wrong_type(p, s, "a size (65536, \"64K\", \"1M\")");
	v = config_setting_get_string(s);
	n = strlen(v);
	if (n > 0 && (v[n - 1] == 'K' || v[n - 1] == 'k'))
		mul = 1024;
	else if (n > 0 && (v[n - 1] == 'M' || v[n - 1] == 'm'))
		mul = 1024 * 1024;
	if (mul > 1)
		n--;
	if (n == 0 || n >= sizeof num)
		return conf_key_error(p, s,
		    "\"%s\" is not a size (65536, "
		    "\"64K\", \"1M\")",
		    v);
	memcpy(num, v, n);
	num[n] = '\0';
	if (parse_ll(num, 0, LLONG_MAX / mul, &x, &e) != 0)
		return conf_key_error(p, s,
		    "\"%s\" is not a size (65536, "
		    "\"64K\", \"1M\"): %s",
		    v, e);
	if (x * mul < k->min || x * mul > k->max)
		return conf_key_error(
		    p, s, "%s is out of range %lld..%lld", v, k->min, k->max);
	*out = x * mul;
	return 0;
}

int
conf_get_number(struct parse *p, const config_setting_t *s, const struct key *k,
    double *out)
{
	double v;

	if (conf_is_int(s))
		v = (double)config_setting_get_int64(s);
	else if (config_setting_type(s) == CONFIG_TYPE_FLOAT)
		v = config_setting_get_float(s);
	else
		return conf_wrong_type(p, s, "a number");
	if (!isfinite(v) || v < k->dmin || v > k->dmax)
		return conf_key_error(
		    p, s, "%g is out of range %g..%g", v, k->dmin, k->dmax);
	*out = v;
	return 0;
}

int
conf_get_strv(
    struct parse *p, const config_setting_t *s, char ***outv, size_t *outn)
{
	const config_setting_t *e;
	const char             *v;
	char                  **argv;
	int                     i, n;

	if (config_setting_type(s) != CONFIG_TYPE_ARRAY &&
	    config_setting_type(s) != CONFIG_TYPE_LIST)
		return conf_wrong_type(p, s, "an array of strings [ \"...\" ]");
	n = config_setting_length(s);
	argv = xcalloc((size_t)n + 1, sizeof *argv);
	for (i = 0; i < n; i++) {
		e = config_setting_get_elem(s, (unsigned)i);
		if ((v = conf_get_string(p, e, 0)) == NULL)
			break;
		argv[i] = xstrdup(v);
	}
	*outv = argv;
	*outn = (size_t)i;
	return i == n ? 0 : -1;
}
