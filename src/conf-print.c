/*
 * conf-print.c: config check's text, the effective configuration in
 * libconfig syntax with every secret masked, written by walking the key
 * table (conf-int.h).  Like the report writers, it returns a string and
 * never prints.
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf-int.h"
#include "conf-print.h"
#include "duration.h"
#include "util.h"

#define MASKED "********"

static void
conf_print_str(struct buf *b, int indent, const char *key, const char *v)
{
	if (v == NULL)
		return;
	buf_printf(b, "%*s%s = ", indent, "", key);
	buf_add_quoted(b, v);
	buf_adds(b, ";\n");
}

static void
conf_print_secret(struct buf *b, int indent, const char *key, const char *v)
{
	if (v != NULL)
		buf_printf(b, "%*s%s = \"" MASKED "\";\n", indent, "", key);
}

/* A URL without what it might carry as credentials: the userinfo and the
 * query are masked. */
static char *
conf_url_masked(const char *url)
{
	struct buf  b;
	const char *auth, *at, *end, *q, *frag;

	buf_init(&b);
	if ((auth = conf_url_authority(url, &at, &end)) == NULL) {
		buf_adds(&b, url);
		return buf_steal(&b);
	}
	buf_add(&b, url, (size_t)(auth - url));
	if (at != NULL) {
		buf_adds(&b, MASKED "@");
		auth = at + 1;
	}
	q = auth + strcspn(auth, "?#");
	buf_add(&b, auth, (size_t)(q - auth));
	if (*q == '?') {
		buf_adds(&b, "?" MASKED);
		if ((frag = strchr(q, '#')) != NULL)
			buf_adds(&b, frag);
	} else
		buf_adds(&b, q);
	return buf_steal(&b);
}

static void
conf_print_url(struct buf *b, int indent, const char *key, const char *url)
{
	char *m;

	if (url == NULL)
		return;
	m = conf_url_masked(url);
	conf_print_str(b, indent, key, m);
	free(m);
}

static void
conf_print_dur(struct buf *b, int indent, const char *key, int64_t ms)
{
	char buf[64];

	duration_format(ms, buf, sizeof buf);
	buf_printf(b, "%*s%s = \"%s\";\n", indent, "", key, buf);
}

static void
conf_print_ll(struct buf *b, int indent, const char *key, long long v)
{
	/* libconfig needs the L suffix past 32 bits. */
	buf_printf(b, "%*s%s = %lld%s;\n", indent, "", key, v,
	    (v > INT_MAX || v < INT_MIN) ? "L" : "");
}

static void
conf_print_dbl(struct buf *b, int indent, const char *key, double v)
{
	char num[64];

	snprintf(num, sizeof num, "%.6g", v);
	if (strpbrk(num, ".eE") == NULL)
		buf_printf(b, "%*s%s = %s.0;\n", indent, "", key, num);
	else
		buf_printf(b, "%*s%s = %s;\n", indent, "", key, num);
}

static void
conf_print_strv(struct buf *b, int indent, const char *key, char **v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	buf_printf(b, "%*s%s = [ ", indent, "", key);
	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_adds(b, ", ");
		buf_add_quoted(b, v[i]);
	}
	buf_adds(b, " ];\n");
}

/* Header values are masked unless the header is known to carry no
 * credential: Authorization, X-Api-Key and friends come in many names. */
static int
conf_header_is_harmless(const char *h)
{
	static const char *const harmless[] = { "Accept", "Accept-Language",
		"Cache-Control", "Content-Language", "Content-Type",
		"User-Agent", NULL };
	size_t                   i, n = strcspn(h, ":");

	for (i = 0; harmless[i] != NULL; i++) {
		if (strlen(harmless[i]) == n &&
		    strncasecmp(h, harmless[i], n) == 0)
			return 1;
	}
	return 0;
}

static void
conf_print_headers(
    struct buf *b, int indent, const char *key, char **v, size_t nv)
{
	size_t i, n;

	if (v == NULL)
		return;
	buf_printf(b, "%*s%s = [ ", indent, "", key);
	for (i = 0; i < nv; i++) {
		if (i > 0)
			buf_adds(b, ", ");
		if (conf_header_is_harmless(v[i]))
			buf_add_quoted(b, v[i]);
		else {
			n = strcspn(v[i], ":");
			buf_printf(b, "\"%.*s: " MASKED "\"", (int)n, v[i]);
		}
	}
	buf_adds(b, " ];\n");
}

static void conf_print_keys(
    struct buf *, const struct key *, const void *, unsigned, int);

static void
conf_print_named(
    struct buf *b, const struct key *k, const void *base, int indent)
{
	const char *elem = *(char *const *)KEY_FIELD(base, k);
	size_t      i, n = *(const size_t *)KEY_FIELD2(base, k);

	for (i = 0; i < n; i++, elem += k->size) {
		buf_printf(b, "%*s%s = {\n", indent, "", *(char *const *)elem);
		conf_print_keys(b, k->sub, elem,
		    k->types_of != NULL ? k->types_of(elem) : 0, indent + 2);
		buf_printf(b, "%*s};\n", indent, "");
	}
}

static void
conf_print_key(struct buf *b, const struct key *k, const void *base,
    unsigned types, int indent)
{
	const void *f = KEY_FIELD(base, k);
	const char *str = NULL;

	if (k->kind == K_STR || k->kind == K_TEXT || k->kind == K_SENUM ||
	    k->kind == K_SECRET || k->kind == K_SECRETFILE)
		str = *(char *const *)f;
	switch (k->kind) {
	case K_STR:
	case K_TEXT:
	case K_SENUM:
		if (k->flags & KF_URL)
			conf_print_url(b, indent, k->name, str);
		else
			conf_print_str(b, indent, k->name, str);
		break;
	case K_SECRET:
		/* Read from its file: the file's path is printed instead. */
		if (*(char *const *)KEY_FIELD2(base, k) == NULL)
			conf_print_secret(b, indent, k->name, str);
		break;
	case K_SECRETFILE:
		conf_print_str(b, indent, k->name, str);
		break;
	case K_ENUM:
		conf_print_str(b, indent, k->name, k->values[*(const int *)f]);
		break;
	case K_DUR:
		conf_print_dur(b, indent, k->name, *(const int64_t *)f);
		break;
	case K_UINT:
		buf_printf(b, "%*s%s = %u;\n", indent, "", k->name,
		    *(const unsigned *)f);
		break;
	case K_INT:
		buf_printf(
		    b, "%*s%s = %d;\n", indent, "", k->name, *(const int *)f);
		break;
	case K_LL:
		conf_print_ll(b, indent, k->name, *(const long long *)f);
		break;
	case K_DBL:
		conf_print_dbl(b, indent, k->name, *(const double *)f);
		break;
	case K_BOOL:
		buf_printf(b, "%*s%s = %s;\n", indent, "", k->name,
		    *(const bool *)f ? "true" : "false");
		break;
	case K_STRV:
		if (k->flags & KF_HEADERS)
			conf_print_headers(b, indent, k->name,
			    *(char **const *)f,
			    *(const size_t *)KEY_FIELD2(base, k));
		else
			conf_print_strv(b, indent, k->name, *(char **const *)f,
			    *(const size_t *)KEY_FIELD2(base, k));
		break;
	case K_GROUP:
	case K_NAMED:
		if ((k->flags & KF_PRESENT) &&
		    !*(const bool *)KEY_FIELD2(base, k))
			break;
		buf_printf(b, "%*s%s = {\n", indent, "", k->name);
		if (k->kind == K_NAMED)
			conf_print_named(b, k, base, indent + 2);
		else
			conf_print_keys(b, k->sub, f, types, indent + 2);
		buf_printf(b, "%*s};\n", indent, "");
		break;
	}
}

static void
conf_print_keys(struct buf *b, const struct key *keys, const void *base,
    unsigned types, int indent)
{
	const struct key *k;
	const char       *note;

	for (k = keys; k->name != NULL; k++) {
		if (!conf_key_applies(k, types) ||
		    (k->shown != NULL && !k->shown(base)))
			continue;
		conf_print_key(b, k, base, types, indent);
		if (k->note != NULL && (note = k->note(base)) != NULL)
			buf_printf(b, "%*s# %s\n", indent, "", note);
	}
}

char *
conf_print_text(const struct conf *c)
{
	struct buf  b;
	const char *key;
	size_t      i;

	buf_init(&b);
	buf_printf(&b, "# %s: effective configuration, secrets masked\n",
	    c->path != NULL ? c->path : "(defaults)");
	conf_print_keys(&b, conf_top_keys, c, 0, 0);
	if (c->nsecrets > 0)
		buf_adds(
		    &b, "# secret files, and the commands that read them:\n");
	for (i = 0; i < c->nsecrets; i++) {
		/* The key, without the file:line of where (which names
		 * this file: the printed text must read back the same). */
		key = strrchr(c->secrets[i].where, ' ');
		key = key != NULL ? key + 1 : c->secrets[i].where;
		if (c->secrets[i].channel != NULL)
			buf_printf(&b,
			    "#   %s: outbox dispatch on channel %s (%s)\n",
			    c->secrets[i].path, c->secrets[i].channel, key);
		else if (c->secrets[i].job != NULL)
			buf_printf(&b, "#   %s: run %s (%s)\n",
			    c->secrets[i].path, c->secrets[i].job, key);
		else
			buf_printf(&b,
			    "#   %s: every command that uses the database "
			    "(%s)\n",
			    c->secrets[i].path, key);
	}
	return buf_steal(&b);
}
