/*
 * conf.c: the configuration (cronguard.conf(5)), parsed with libconfig:
 * loading, includes, the parse by the key table.  The keys themselves are
 * in conf-keys.c's table (conf-int.h); one setting's value is read by
 * conf-value.c, the checks beyond one value are conf-check.c's, file
 * ownership and secrets conf-secret.c's.
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <libconfig.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "conf-int.h"
#include "duration.h"
#include "schedule.h"
#include "util.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

#define LOCK_NAME_MAX 64 /* MySQL's limit for GET_LOCK names */

static int conf_parse_named(
    struct parse *, const config_setting_t *, const struct key *, void *);

static int
conf_parse_key(struct parse *p, const config_setting_t *s, const struct key *k,
    void *base, unsigned types)
{
	char       *field = (char *)base + k->off;
	char      **sp = (char **)(void *)field;
	const char *v;
	long long   ll;
	int         i;

	switch (k->kind) {
	case K_STR:
	case K_TEXT:
		if ((k->flags & KF_EMPTY) &&
		    config_setting_type(s) == CONFIG_TYPE_STRING &&
		    strcmp(config_setting_get_string(s), "") == 0)
			v = "";
		else if ((v = conf_get_string(p, s, k->kind == K_TEXT)) == NULL)
			return -1;
		free(*sp);
		*sp = xstrdup(v);
		return 0;
	case K_SENUM:
		if ((i = conf_get_enum(p, s, k->values)) == -1)
			return -1;
		free(*sp);
		*sp = xstrdup(k->values[i]);
		return 0;
	case K_ENUM:
		if ((i = conf_get_enum(p, s, k->values)) == -1)
			return -1;
		memcpy(field, &i, sizeof i);
		return 0;
	case K_DUR:
		return conf_get_duration(p, s, k, (int64_t *)(void *)field);
	case K_UINT:
		if (conf_get_integer(p, s, k, &ll) == -1)
			return -1;
		*(unsigned *)(void *)field = (unsigned)ll;
		return 0;
	case K_INT:
		if (conf_get_integer(p, s, k, &ll) == -1)
			return -1;
		*(int *)(void *)field = (int)ll;
		return 0;
	case K_LL:
		if (k->flags & KF_SIZE)
			return conf_get_size(
			    p, s, k, (long long *)(void *)field);
		return conf_get_integer(p, s, k, (long long *)(void *)field);
	case K_DBL:
		return conf_get_number(p, s, k, (double *)(void *)field);
	case K_BOOL:
		if (config_setting_type(s) != CONFIG_TYPE_BOOL)
			return conf_wrong_type(p, s, "true or false");
		*(bool *)(void *)field = config_setting_get_bool(s) != 0;
		return 0;
	case K_STRV:
		return conf_get_strv(p, s, (char ***)(void *)field,
		    (size_t *)(void *)((char *)base + k->off2));
	case K_SECRET:
		return conf_parse_secret(p, s, k, base);
	case K_SECRETFILE:
		return conf_parse_secret_file(p, s, k, base);
	case K_GROUP:
		if (k->flags & KF_PRESENT)
			*(bool *)KEY_FIELD2(base, k) = true;
		return conf_parse_group(p, s, k->sub, field, types);
	case K_NAMED:
		return conf_parse_named(p, s, k, base);
	}
	return conf_key_error(p, s, "internal error: unknown key kind");
}

/* The key called name that applies to types; *elsewhere is set when
 * there is one, but for other channel types only. */
static const struct key *
conf_find_key(
    const struct key *keys, const char *name, unsigned types, int *elsewhere)
{
	*elsewhere = 0;
	for (; keys->name != NULL; keys++) {
		if (strcmp(keys->name, name) != 0)
			continue;
		if (conf_key_applies(keys, types))
			return keys;
		*elsewhere = 1;
	}
	return NULL;
}

/* The name of the one type in the bit set types (conf_channel_types). */
static const char *
conf_channel_types_name(unsigned types)
{
	unsigned t;

	for (t = 0; t < CHANNEL_NTYPES; t++)
		if (types & (1u << t))
			return conf_channel_type_name((enum channel_type)t);
	return "?";
}

static int
conf_unknown_key(
    struct parse *p, const config_setting_t *s, const struct key *keys)
{
	struct buf b;
	int        rv;

	/* At the top, a misspelt section is the likely mistake: name them. */
	if (keys != conf_top_keys)
		return conf_key_error(p, s, "unknown key");
	buf_init(&b);
	for (; keys->name != NULL; keys++)
		buf_printf(&b, "%s%s", b.len > 0 ? ", " : "", keys->name);
	rv = conf_key_error(p, s, "unknown key (expected %s)", b.data);
	buf_free(&b);
	return rv;
}

int
conf_parse_group(struct parse *p, const config_setting_t *g,
    const struct key *keys, void *base, unsigned types)
{
	const config_setting_t *s;
	const struct key       *k;
	int                     i, n, elsewhere;

	if (!config_setting_is_group(g))
		return conf_wrong_type(p, g, "a group { ... }");
	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		s = config_setting_get_elem(g, (unsigned)i);
		k = conf_find_key(
		    keys, config_setting_name(s), types, &elsewhere);
		if (k == NULL && elsewhere)
			return conf_key_error(p, s,
			    "not valid for a channel of type %s",
			    conf_channel_types_name(types));
		if (k == NULL)
			return conf_unknown_key(p, s, keys);
		if (conf_parse_key(p, s, k, base, types) == -1)
			return -1;
	}
	return 0;
}

/* A section of named groups: channels = { mail = {...}; ... }. */
static int
conf_parse_named(
    struct parse *p, const config_setting_t *g, const struct key *k, void *base)
{
	const config_setting_t *s;
	char                  **arr = KEY_FIELD(base, k);
	size_t                 *n = KEY_FIELD2(base, k), i, len;

	if (!config_setting_is_group(g))
		return conf_wrong_type(p, g, "a group { name = {...}; }");
	len = (size_t)config_setting_length(g);
	*arr = xcalloc(len, k->size);
	for (i = 0; i < len; i++) {
		s = config_setting_get_elem(g, (unsigned)i);
		*n = i + 1;
		if (k->parse(p, s, *arr + i * k->size) == -1)
			return -1;
	}
	return 0;
}

/* Fill the defaults of keys (for a channel: those of its types) into the
 * struct at base; only string defaults allocate. */
void
conf_key_defaults(const struct key *keys, void *base, unsigned types)
{
	const struct key *k;
	void             *f;

	for (k = keys; k->name != NULL; k++) {
		if (!conf_key_applies(k, types))
			continue;
		f = KEY_FIELD(base, k);
		switch (k->kind) {
		case K_STR:
		case K_TEXT:
		case K_SENUM:
			if (k->sdef != NULL)
				*(char **)f = xstrdup(k->sdef);
			break;
		case K_ENUM:
		case K_INT:
			*(int *)f = (int)k->def;
			break;
		case K_UINT:
			*(unsigned *)f = (unsigned)k->def;
			break;
		case K_DUR:
			*(int64_t *)f = k->def;
			break;
		case K_LL:
			*(long long *)f = k->def;
			break;
		case K_DBL:
			*(double *)f = k->ddef;
			break;
		case K_BOOL:
			*(bool *)f = k->def != 0;
			break;
		case K_GROUP:
			conf_key_defaults(k->sub, f, types);
			break;
		case K_STRV:
		case K_SECRET:
		case K_SECRETFILE:
		case K_NAMED:
			break;
		}
	}
}

static char *
conf_default_runtime_dir(void)
{
	const char *e;

	/* systemd's RuntimeDirectory= may list several, colon-separated. */
	if ((e = getenv("RUNTIME_DIRECTORY")) != NULL && *e != '\0')
		return xstrndup(e, strcspn(e, ":"));
	if (access("/run/cronguard", W_OK) == 0)
		return xstrdup("/run/cronguard");
	if ((e = getenv("TMPDIR")) != NULL && *e != '\0')
		return xstrdup(e);
	return xstrdup("/tmp");
}

void
conf_defaults(struct conf *c)
{
	/* Nothing is allocated here (the top-level tables have no string
	 * defaults), so a caller may fill defaults and then conf_load()
	 * over them without leaking: the defaults that need memory or the
	 * environment (db.host, runtime_dir) are filled by conf_load(). */
	memset(c, 0, sizeof *c);
	conf_key_defaults(conf_top_keys, c, 0);
}

/* The directory of path, absolute, so that messages name included files
 * unambiguously. */
static char *
conf_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');
	char       *cwd, *dir;

	if (slash == path)
		return xstrdup("/");
	if (*path == '/')
		return xstrndup(path, (size_t)(slash - path));
	if ((cwd = getcwd(NULL, 0)) == NULL)
		return slash == NULL ? xstrdup(".")
		                     : xstrndup(path, (size_t)(slash - path));
	if (slash == NULL)
		dir = xstrdup(cwd);
	else
		dir = xasprintf("%s/%.*s", cwd, (int)(slash - path), path);
	free(cwd);
	return dir;
}

/*
 * libconfig keeps a string only up to a NUL byte and drops a "\x00" escape,
 * so "a\0pp" would silently become "a" or "app": refuse both, with the
 * line.  Walks the text as the scanner does: strings, escapes, comments.
 * Returns 0 or -1 with p->err set.
 */
static int
conf_check_text(struct parse *p, const char *file, const char *text, size_t len)
{
	const char *c, *end = text + len, *why = NULL;
	int         line = 1, in_string = 0;

	for (c = text; c < end && why == NULL; c++) {
		if (*c == '\0')
			why = "a NUL byte";
		else if (*c == '\n')
			line++;
		else if (in_string && *c == '\\' && c + 1 < end) {
			if (end - c >= 4 && c[1] == 'x' && c[2] == '0' &&
			    c[3] == '0')
				why = "a \\x00 escape (NUL) in a string";
			else if (c[1] != '\n')
				c++;
		} else if (*c == '"')
			in_string = !in_string;
		else if (!in_string &&
		    (*c == '#' || (*c == '/' && c + 1 < end && c[1] == '/')))
			c += strcspn(c, "\n") - 1;
		else if (!in_string && *c == '/' && c + 1 < end &&
		    c[1] == '*') {
			for (c += 2;
			     c + 1 < end && !(c[0] == '*' && c[1] == '/');
			     c++) {
				if (*c == '\n')
					line++;
			}
			c++;
		}
	}
	if (why == NULL)
		return 0;
	p->err =
	    xasprintf("%s:%d: %s is not allowed: strings would be cut short",
	        file, line, why);
	return -1;
}

/*
 * libconfig 1.5's scanner calls exit(2) when an @include names a directory
 * or cannot be read (hyperrealm/libconfig#292), which would turn a
 * configuration error into a silent exit 2.  So check every @include line
 * ourselves first, the same way the scanner reads it: a line that starts
 * with optional blanks, "@include", blanks and a quoted path, resolved
 * against the include directory.  Each file's text is checked too, and
 * the included files are listed in p->includes.  Returns 0 or -1 with
 * p->err set.
 */
static int
conf_check_includes(struct parse *p, const char *file, int depth)
{
	struct stat st;
	const char *why;
	char       *text, *errstr = NULL, *line, *next, *q, *name, *full;
	char       *mode_err = NULL;
	size_t      len;
	int         lineno = 0, rv = -1;

	if (depth > 10) {
		p->err = xasprintf("%s: @include nested too deeply", file);
		return -1;
	}
	if ((text = read_file(file, 1024 * 1024, &len, &errstr)) == NULL) {
		p->err = errstr;
		return -1;
	}
	if (conf_check_text(p, file, text, len) == -1)
		goto out;
	for (line = text; line != NULL; line = next) {
		lineno++;
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		line += strspn(line, " \t");
		if (strncmp(line, "@include", 8) != 0 ||
		    (line[8] != ' ' && line[8] != '\t'))
			continue;
		line += 8 + strspn(line + 8, " \t");
		if (*line != '"' || (q = strchr(line + 1, '"')) == NULL)
			continue; /* libconfig reports the syntax */
		name = xstrndup(line + 1, (size_t)(q - line - 1));
		full = *name == '/' ? xstrdup(name)
		                    : xasprintf("%s/%s", p->dir, name);
		p->relative |= *name != '/';
		why = NULL;
		if (stat(full, &st) == -1)
			why = strerror(errno);
		else if (!S_ISREG(st.st_mode))
			why = "not a regular file";
		else if ((mode_err = conf_file_error(full, &st, 0)) != NULL)
			why = mode_err;
		if (why != NULL) {
			p->err = xasprintf("%s:%d: @include \"%s\" (%s): %s",
			    file, lineno, name, full, why);
			free(mode_err);
			free(name);
			free(full);
			goto out;
		}
		free(name);
		p->includes = xreallocarray(
		    p->includes, p->nincludes + 1, sizeof *p->includes);
		p->includes[p->nincludes++] = full;
		if (conf_check_includes(p, full, depth + 1) == -1)
			goto out;
	}
	rv = 0;
out:
	free(text);
	return rv;
}

/* libconfig's syntax error, "file:line: text", with the file resolved. */
static char *
conf_syntax_error(struct parse *p, config_t *cfg)
{
	char *file, *err;

	file = conf_resolve(p, config_error_file(cfg));
	err = xasprintf(
	    "%s:%d: %s", file, config_error_line(cfg), config_error_text(cfg));
	free(file);
	return err;
}

/*
 * libconfig 1.5 puts its include directory in front of every @include
 * path, an absolute one too ("dir//etc/x.conf").  Without an include
 * directory it uses the path as it is; so a configuration that @includes
 * a relative path is read with the configuration's directory as the
 * working directory, where relative paths then resolve, and the old one
 * is restored after.  The path of the configuration itself is made
 * absolute first (p->path stays as given, for messages).  Without a
 * relative @include the working directory is left alone: one this user
 * cannot read or enter (cron or runuser started in another user's home)
 * is then no error.  Returns 0 (*cwd the old directory, or -1 when it
 * was not changed), or -1 with p->err.
 */
static int
conf_include_enter(struct parse *p, int *cwd)
{
	*cwd = -1;
	if (!p->relative)
		return 0;
	/* O_PATH: enough for fchdir, and needs no read permission. */
	if ((*cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		p->err = xasprintf("cannot open the working directory (an "
		                   "@include names a relative path): %s",
		    strerror(errno));
		return -1;
	}
	if (chdir(p->dir) == -1) {
		p->err = xasprintf("%s: %s", p->dir, strerror(errno));
		close(*cwd);
		*cwd = -1;
		return -1;
	}
	return 0;
}

static int
conf_include_leave(struct parse *p, int cwd)
{
	int rv = 0;

	if (cwd == -1)
		return 0;
	if (fchdir(cwd) == -1 && p->err == NULL) {
		p->err = xasprintf("cannot return to the working directory "
		                   "(an @include names a relative path): %s",
		    strerror(errno));
		rv = -1;
	}
	close(cwd);
	return rv;
}

/*
 * An included file is read as if pasted in, so an unterminated string or
 * group in it is reported at the including file's line.  Parse each
 * included file on its own: the first that is not valid by itself is
 * where the error is.  Returns NULL when each is.
 */
static char *
conf_blame_include(struct parse *p)
{
	config_t cfg;
	char    *err = NULL;
	size_t   i;

	/* The deepest and last first: a file that includes a broken one is
	 * broken too when read by itself. */
	for (i = p->nincludes; i-- > 0 && err == NULL;) {
		config_init(&cfg);
		if (!config_read_file(&cfg, p->includes[i]) &&
		    config_error_type(&cfg) == CONFIG_ERR_PARSE)
			err = conf_syntax_error(p, &cfg);
		config_destroy(&cfg);
	}
	return err;
}

/* The configuration file itself, before it is read: a regular file the
 * mode rule accepts.  NULL, or the error (allocated). */
static char *
conf_file_usable(const char *path)
{
	struct stat st;

	if (stat(path, &st) == -1)
		return xasprintf("%s: %s", path, strerror(errno));
	/* A FIFO or a device would block or never end. */
	if (!S_ISREG(st.st_mode))
		return xasprintf("%s: not a regular file", path);
	/* Its commands run as whoever runs cronguard. */
	return conf_file_error(path, &st, 0);
}

int
conf_load(const char *path, struct conf *c, char **errstr)
{
	struct parse p;
	size_t       i;
	int          rv = -1, saved, cwd = -1;

	*errstr = NULL;
	conf_defaults(c);
	c->path = xstrdup(path);
	memset(&p, 0, sizeof p);
	p.path = path;
	p.c = c;
	config_init(&p.cfg);

	if ((p.err = conf_file_usable(path)) != NULL)
		goto out;
	/* @include "x.conf" is relative to the configuration's directory,
	 * "/etc/x.conf" is used as it is. */
	p.dir = conf_dirname(path);
	p.abspath = *path == '/'
	    ? xstrdup(path)
	    : xasprintf("%s/%s", p.dir,
	          strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path);
	if (conf_check_includes(&p, path, 0) == -1)
		goto out;
	if (conf_include_enter(&p, &cwd) == -1)
		goto out;
	errno = 0;
	if (!config_read_file(&p.cfg, p.abspath)) {
		saved = errno;
		if (config_error_type(&p.cfg) == CONFIG_ERR_FILE_IO)
			p.err = xasprintf("%s: cannot read: %s", path,
			    strerror(saved != 0 ? saved : EIO));
		else if ((p.err = conf_blame_include(&p)) == NULL)
			p.err = conf_syntax_error(&p, &p.cfg);
		conf_include_leave(&p, cwd);
		goto out;
	}
	if (conf_include_leave(&p, cwd) == -1)
		goto out;
	if (conf_parse_group(
	        &p, config_root_setting(&p.cfg), conf_top_keys, c, 0) == -1)
		goto out;
	if (conf_check(&p) == -1)
		goto out;
	/* With an option file and no host or socket, the option file
	 * decides where to connect (db_connect passes NULL). */
	if (c->db.host == NULL && c->db.socket == NULL &&
	    c->db.option_file == NULL)
		c->db.host = xstrdup("127.0.0.1");
	if (c->runtime_dir == NULL)
		c->runtime_dir = conf_default_runtime_dir();
	c->outbox.chans = c->channels;
	c->outbox.nchans = c->nchannels;
	rv = 0;

out:
	config_destroy(&p.cfg);
	free(p.abspath);
	free(p.dir);
	for (i = 0; i < p.nincludes; i++)
		free(p.includes[i]);
	free(p.includes);
	if (rv == -1) {
		conf_free(c);
		*errstr = p.err;
	}
	return rv;
}

static void
conf_strv_free(char **v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void
conf_free_keys(const struct key *keys, void *base)
{
	const struct key *k;
	void             *f;
	char             *elem;
	size_t            i, n;

	for (k = keys; k->name != NULL; k++) {
		if (conf_key_repeated(keys, k))
			continue;
		f = KEY_FIELD(base, k);
		switch (k->kind) {
		case K_STR:
		case K_TEXT:
		case K_SENUM:
		case K_SECRETFILE: /* the secret is freed by its K_SECRET */
			free(*(char **)f);
			break;
		case K_SECRET:
			conf_secret_free(*(char **)f);
			break;
		case K_STRV:
			conf_strv_free(
			    *(char ***)f, *(size_t *)KEY_FIELD2(base, k));
			break;
		case K_GROUP:
			conf_free_keys(k->sub, f);
			break;
		case K_NAMED:
			elem = *(char **)f;
			n = *(size_t *)KEY_FIELD2(base, k);
			for (i = 0; i < n; i++, elem += k->size) {
				free(*(char **)(void *)elem); /* name */
				conf_free_keys(k->sub, elem);
			}
			free(*(char **)f);
			break;
		case K_ENUM:
		case K_DUR:
		case K_UINT:
		case K_INT:
		case K_LL:
		case K_DBL:
		case K_BOOL:
			break;
		}
	}
}

void
conf_free(struct conf *c)
{
	size_t i;

	free(c->path);
	for (i = 0; i < c->njobs; i++) {
		schedule_free(c->jobs[i].schedule);
		tzone_free(c->jobs[i].tzone);
	}
	conf_free_keys(conf_top_keys, c);
	for (i = 0; i < c->nsecrets; i++)
		free(c->secrets[i].where);
	free(c->secrets);
	conf_strv_free(c->warnings, c->nwarnings);
	memset(c, 0, sizeof *c);
}
const char *
conf_default_path(void)
{
	const char *e;

	if ((e = getenv("CRONGUARD_CONFIG")) != NULL && *e != '\0')
		return e;
	return SYSCONFDIR "/cronguard/cronguard.conf";
}

const struct conf_channel *
conf_channel_find(const struct conf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nchannels; i++) {
		if (strcmp(c->channels[i].name, name) == 0)
			return &c->channels[i];
	}
	return NULL;
}

const struct conf_job *
conf_job_find(const struct conf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->njobs; i++) {
		if (strcmp(c->jobs[i].name, name) == 0)
			return &c->jobs[i];
	}
	return NULL;
}

/*
 * Returns 1 when name is usable as a GET_LOCK name: 1..64 printable ASCII
 * characters.  Otherwise returns 0 with *why saying what is wrong.
 */
int
conf_lock_name_valid(const char *name, const char **why)
{
	const unsigned char *u;
	size_t               len;

	if (name == NULL || *name == '\0') {
		*why = "is empty";
		return 0;
	}
	for (u = (const unsigned char *)name; *u != '\0'; u++) {
		if (*u < 0x20 || *u > 0x7e) {
			*why = "is not printable ASCII";
			return 0;
		}
	}
	len = strlen(name);
	if (len > LOCK_NAME_MAX) {
		*why = "longer than 64 characters";
		return 0;
	}
	return 1;
}
