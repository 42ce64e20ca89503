/*
 * conf-secret.c: the files cronguard trusts and the secrets in them: the
 * ownership and mode rule for the configuration and every secret file,
 * passwords in URLs, the secret keys' parse, and the secret files read
 * when a command asks (conf_read_secrets).  conf.c calls it for every
 * file it reads and every secret key it parses.
 */
#include "config.h"

#include <sys/prctl.h>
#include <sys/stat.h>

#include <assert.h>
#include <errno.h>
#include <libconfig.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf-int.h"
#include "util.h"
#include "whsec.h"

/* Whose files and directories cronguard trusts: root's and those of the
 * user it runs as.  Anyone else could change the commands it runs. */
static int
conf_trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* "path is owned by nobody (uid 65534), not by root or USER" and its
 * fix, for path or (dir != NULL) a directory on its way. */
static int
conf_owner_problem(
    const char *path, const char *dir, uid_t uid, char **reason, char **fix)
{
	char *owner = user_name(uid), *me = user_name(geteuid()), *whose;

	whose = geteuid() == 0 ? xstrdup("root") : xasprintf("root or %s", me);
	if (dir == NULL) {
		*reason = xasprintf("%s is owned by %s (uid %lu), not by %s",
		    path, owner, (unsigned long)uid, whose);
		*fix = xasprintf(
		    "chown %s %s", geteuid() == 0 ? "root" : me, path);
	} else {
		*reason = xasprintf("%s is in %s, owned by %s (uid %lu), not "
		                    "by %s",
		    path, dir, owner, (unsigned long)uid, whose);
		*fix = xasprintf("chown root %s, or move %s to a directory "
		                 "only root can write",
		    dir, path);
	}
	free(owner);
	free(me);
	free(whose);
	return -1;
}

/* A directory on the way to path: owned by root or this user, and
 * writable by nobody else unless it is sticky and root's (/tmp). */
static int
conf_dir_problem(const char *path, const char *dir, char **reason, char **fix)
{
	struct stat st;
	unsigned    mode;

	if (stat(dir, &st) == -1) {
		*reason = xasprintf("cannot stat %s, a directory of %s: %s",
		    dir, path, strerror(errno));
		*fix = xstrdup("correct the path");
		return -1;
	}
	if (!conf_trusted_owner(st.st_uid))
		return conf_owner_problem(path, dir, st.st_uid, reason, fix);
	mode = (unsigned)st.st_mode;
	if ((mode & (S_IWGRP | S_IWOTH)) == 0 ||
	    ((mode & S_ISVTX) != 0 && st.st_uid == 0))
		return 0;
	*reason = xasprintf("%s is in %s, writable by %s (mode %04o)%s", path,
	    dir, (mode & S_IWOTH) ? "others" : "its group", mode & 07777,
	    (mode & S_ISVTX) ? ", sticky but not root's" : "");
	*fix = xasprintf(
	    "chmod go-w %s, or move %s to a directory only root can write", dir,
	    path);
	return -1;
}

/* Every directory of the absolute path abs, from its own up to "/". */
static int
conf_dirs_problem(const char *path, const char *abs, char **reason, char **fix)
{
	char *dir = xstrdup(abs), *slash;
	int   rv = 0;

	while (rv == 0 && (slash = strrchr(dir, '/')) != NULL) {
		if (slash == dir) {
			slash[1] = '\0';
			rv = conf_dir_problem(path, dir, reason, fix);
			break;
		}
		*slash = '\0';
		rv = conf_dir_problem(path, dir, reason, fix);
	}
	free(dir);
	return rv;
}

/* The directories path is reached through: those of the name as given
 * (a symbolic link in them could be replaced) and those of the file it
 * resolves to (realpath). */
static int
conf_path_problem(const char *path, char **reason, char **fix)
{
	char *real, *cwd = NULL, *abs;
	int   rv;

	if ((real = realpath(path, NULL)) == NULL) {
		*reason =
		    xasprintf("cannot resolve %s: %s", path, strerror(errno));
		*fix = xstrdup("correct the path");
		return -1;
	}
	if (*path == '/')
		abs = xstrdup(path);
	else if ((cwd = getcwd(NULL, 0)) != NULL)
		abs = xasprintf("%s/%s", cwd, path);
	else
		abs = xstrdup(real);
	rv = conf_dirs_problem(path, real, reason, fix);
	if (rv == 0 && strcmp(abs, real) != 0)
		rv = conf_dirs_problem(path, abs, reason, fix);
	free(real);
	free(cwd);
	free(abs);
	return rv;
}

/*
 * The one rule for the files cronguard trusts (cronguard.conf(5), FILES):
 * the configuration (and every file it includes) and every secret file
 * are owned by root or by the user cronguard runs as, may be written by
 * their owner only, and lie in directories that no one else can write
 * (unless sticky and root's, as /tmp), as ssh's StrictModes and sudo
 * check; a secret file, or a configuration file that holds a secret
 * inline, may be read by its owner and its group (root:cronguard 0640),
 * never by others.
 */
int
conf_file_problem(const char *path, const struct stat *st, int secret,
    char **reason, char **fix)
{
	unsigned mode = (unsigned)st->st_mode;

	*reason = *fix = NULL;
	if (!conf_trusted_owner(st->st_uid))
		return conf_owner_problem(path, NULL, st->st_uid, reason, fix);
	if (mode & (S_IWGRP | S_IWOTH)) {
		*reason = xasprintf("%s is writable by %s (mode %04o)", path,
		    (mode & S_IWOTH) ? "others" : "its group", mode & 07777);
		*fix = xasprintf("chmod go-w %s", path);
		return -1;
	}
	if (secret && (mode & S_IROTH)) {
		*reason = xasprintf(
		    "%s is readable by others (mode %04o)", path, mode & 07777);
		*fix = xasprintf("chmod o-r %s", path);
		return -1;
	}
	return conf_path_problem(path, reason, fix);
}

/* conf_file_problem's verdict on path: NULL, or "reason (fix)". */
char *
conf_file_error(const char *path, const struct stat *st, int secret)
{
	char *reason, *fix, *err;

	if (conf_file_problem(path, st, secret, &reason, &fix) == 0)
		return NULL;
	err = xasprintf("%s (%s)", reason, fix);
	free(reason);
	free(fix);
	return err;
}

/* An inline secret makes the file that holds it a secret file. */
static int
conf_check_private(
    struct parse *p, const config_setting_t *s, const char *instead)
{
	char       *file = conf_source_file(p, s), *err;
	struct stat st;
	int         rv = 0;

	if (stat(file, &st) == -1)
		rv = conf_key_error(
		    p, s, "cannot stat %s: %s", file, strerror(errno));
	else if ((err = conf_file_error(file, &st, 1)) != NULL) {
		rv = conf_key_error(
		    p, s, "a secret given inline: %s, or %s", err, instead);
		free(err);
	}
	free(file);
	return rv;
}

/* The authority of a URL, and where its userinfo ends (conf-int.h). */
const char *
conf_url_authority(const char *url, const char **at, const char **end)
{
	const char *auth, *q;

	*at = NULL;
	if ((auth = strstr(url, "://")) == NULL)
		return NULL;
	auth += 3;
	*end = auth + strcspn(auth, "/?#");
	for (q = auth; q < *end; q++) {
		if (*q == '@')
			*at = q;
	}
	return auth;
}

/* A URL whose userinfo holds a password ("smtp://user:pw@host") is an
 * inline secret like any other. */
static int
conf_url_has_password(const char *url)
{
	const char *auth, *at, *end;

	if ((auth = conf_url_authority(url, &at, &end)) == NULL || at == NULL)
		return 0;
	return memchr(auth, ':', (size_t)(at - auth)) != NULL;
}

/* The value of the hexadecimal digit c, or -1. */
static int
hexdigit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * The user name in a URL's userinfo ("relay" in "amqps://relay@host/v",
 * "relay:pw@"), percent-decoded (RFC 3986 2.1), allocated; NULL when the
 * URL names none, or when it decodes to an invalid or empty name.
 */
static char *
conf_url_user(const char *url, int *bad)
{
	const char *auth, *at, *end, *q, *stop;
	char       *user, *w;
	int         hi, lo;

	*bad = 0;
	if ((auth = conf_url_authority(url, &at, &end)) == NULL || at == NULL)
		return NULL;
	if ((stop = memchr(auth, ':', (size_t)(at - auth))) == NULL)
		stop = at;
	w = user = xmalloc((size_t)(stop - auth) + 1);
	for (q = auth; q < stop; q++) {
		if (*q != '%') {
			*w++ = *q;
			continue;
		}
		if (stop - q < 3 || (hi = hexdigit_value(q[1])) < 0 ||
		    (lo = hexdigit_value(q[2])) < 0 || (hi == 0 && lo == 0)) {
			*bad = 1;
			break;
		}
		*w++ = (char)(hi * 16 + lo);
		q += 2;
	}
	*w = '\0';
	if (*bad || *user == '\0') {
		*bad = 1;
		free(user);
		return NULL;
	}
	return user;
}

/* A user in an amqp:// URL is the channel's username (cronguard.conf(5),
 * channels, url); a username key that names another is an error. */
int
conf_amqp_url_user(
    struct parse *p, const config_setting_t *s, struct conf_channel *ch)
{
	const config_setting_t *m = config_setting_get_member(s, "url");
	char                   *user;
	int                     bad, rv = 0;

	if ((user = conf_url_user(ch->url, &bad)) == NULL)
		return bad ? conf_key_error(p, m,
		                 "the user name in the URL is empty or badly "
		                 "percent-encoded")
		           : 0;
	if (ch->username == NULL)
		ch->username = user;
	else {
		if (strcmp(ch->username, user) != 0)
			rv = conf_key_error(p,
			    config_setting_get_member(s, "username"),
			    "\"%s\" disagrees with the URL's user \"%s\": give the user once, in the URL or in username",
			    ch->username, user);
		free(user);
	}
	return rv;
}

int
conf_check_url_secret(
    struct parse *p, const config_setting_t *s, const char *url)
{
	if (s == NULL || !conf_url_has_password(url))
		return 0;
	return conf_check_private(p, s,
	    "take the password out of the URL (username and password_file)");
}

/* Overwrite a secret before freeing it: core dumps and reused heap. */
void
conf_secret_free(char *s)
{
	if (s == NULL)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}

/* Read the secret in path into *out (may be NULL: read and wiped): 0, or
 * -1 or -2 (empty) with an allocated *reason and *fix (conf.h). */
int
conf_secret_problem(const char *path, char **out, char **reason, char **fix)
{
	struct stat st;
	char       *s, *err = NULL;

	*reason = *fix = NULL;
	if (stat(path, &st) == -1) {
		*reason =
		    xasprintf("cannot read %s: %s", path, strerror(errno));
		*fix = xstrdup("create it, or correct the path");
		return -1;
	}
	if (conf_file_problem(path, &st, 1, reason, fix) == -1)
		return -1;
	if ((s = read_secret_file(path, &err)) == NULL) {
		*reason = err;
		*fix = xasprintf(
		    "make %s readable by the user cronguard runs as (owner, or group cronguard: adduser USER cronguard)",
		    path);
		return -1;
	}
	if (*s == '\0') {
		free(s);
		*reason = xasprintf("%s is empty", path);
		*fix = xstrdup("write the secret into it");
		return -2;
	}
	if (out != NULL)
		*out = s;
	else
		conf_secret_free(s);
	return 0;
}

/* Read the secret in path into *out; NULL, or an allocated reason with
 * *rv conf_secret_problem's -1 or -2. */
static char *
conf_secret_read(const char *path, char **out, int *rv)
{
	char *reason, *fix, *err;

	if ((*rv = conf_secret_problem(path, out, &reason, &fix)) == 0)
		return NULL;
	err = xasprintf("%s (%s)", reason, fix);
	free(reason);
	free(fix);
	return err;
}

/* A signing secret the HTTP channel can use (whsec_keys): NULL, or an
 * allocated reason. */
static char *
conf_signing_problem(const char *secret)
{
	struct whsec_keys k;
	char             *err = NULL;

	if (whsec_keys(secret, &k, &err) != 0)
		return err;
	whsec_keys_free(&k);
	return NULL;
}

/*
 * A secret file: noted in c->secrets for config check and
 * conf_read_secrets; the database's is read at once (every command that
 * uses the database needs it), a channel's only when a command asks.
 */
static int
conf_secret_file(struct parse *p, const config_setting_t *s,
    const struct key *k, const char *path, char **out)
{
	struct conf        *c = p->c;
	struct conf_secret *sec;
	char               *err;
	int                 rv;

	c->secrets =
	    xreallocarray(c->secrets, c->nsecrets + 1, sizeof *c->secrets);
	sec = &c->secrets[c->nsecrets++];
	sec->where = conf_where(p, s);
	sec->path = path;
	sec->channel = p->channel;
	sec->job = p->job;
	sec->dest = out;
	sec->signing = (k->flags & KF_SIGNING) != 0;
	if (p->channel != NULL || p->job != NULL)
		return 0;
	if ((err = conf_secret_read(path, out, &rv)) == NULL)
		return 0;
	conf_key_error(p, s, "%s", err);
	free(err);
	return -1;
}

/* A K_SECRET key: the secret inline (the file holding it is then held to
 * the secret files' rule), not also in its _file key, and a signing
 * secret that can sign. */
int
conf_parse_secret(
    struct parse *p, const config_setting_t *s, const struct key *k, void *base)
{
	char      **sp = (char **)(void *)((char *)base + k->off);
	char       *instead;
	const char *v;
	int         rv;

	if ((v = conf_get_string(p, s, 0)) == NULL)
		return -1;
	if (*sp != NULL || *(char **)KEY_FIELD2(base, k) != NULL)
		return conf_key_error(p, s,
		    "give the secret inline or in %s_file, not both", k->name);
	instead = xasprintf("use %s_file", k->name);
	rv = conf_check_private(p, s, instead);
	free(instead);
	if (rv == -1)
		return -1;
	if ((k->flags & KF_SIGNING) &&
	    (instead = conf_signing_problem(v)) != NULL) {
		conf_key_error(p, s, "%s", instead);
		free(instead);
		return -1;
	}
	*sp = xstrdup(v);
	return 0;
}

/* A K_SECRETFILE key: the file's path, and the secret read from it into
 * the key's inline field, which must not be set too. */
int
conf_parse_secret_file(
    struct parse *p, const config_setting_t *s, const struct key *k, void *base)
{
	char      **sp = (char **)(void *)((char *)base + k->off);
	char      **secret = (char **)(void *)((char *)base + k->off2);
	const char *v;

	if ((v = conf_get_string(p, s, 0)) == NULL)
		return -1;
	if (*secret != NULL)
		return conf_key_error(
		    p, s, "give the secret inline or in a file, not both");
	free(*sp);
	*sp = xstrdup(v);
	return conf_secret_file(p, s, k, *sp, secret);
}

/* The secret files a command asks for: a job's (job not NULL), else the
 * channel's (every channel's when channel is NULL). */
static int
conf_secret_wanted(
    const struct conf_secret *sec, const char *channel, const char *job)
{
	if (job != NULL)
		return sec->job != NULL && strcmp(job, sec->job) == 0;
	return sec->channel != NULL &&
	    (channel == NULL || strcmp(channel, sec->channel) == 0);
}

static int
conf_read_secrets_of(
    struct conf *c, const char *channel, const char *job, char **errstr)
{
	struct conf_secret *sec;
	char               *err;
	size_t              i;
	int                 rv;

	*errstr = NULL;
	for (i = 0; i < c->nsecrets; i++) {
		sec = &c->secrets[i];
		if (*sec->dest != NULL ||
		    !conf_secret_wanted(sec, channel, job))
			continue;
		if ((err = conf_secret_read(sec->path, sec->dest, &rv)) !=
		    NULL) {
			conf_secret_free(*sec->dest);
			*sec->dest = NULL;
			*errstr = xasprintf("%s: %s", sec->where, err);
			free(err);
			return rv;
		}
		assert(*sec->dest != NULL); /* read: conf_secret_read set it */
		if (sec->signing &&
		    (err = conf_signing_problem(*sec->dest)) != NULL) {
			conf_secret_free(*sec->dest);
			*sec->dest = NULL;
			*errstr =
			    xasprintf("%s: %s: %s", sec->where, sec->path, err);
			free(err);
			return -2;
		}
		/* Only a job's secret is a URL (ping_url_file); libcurl
		 * would follow file:// or gopher:// as well. */
		if (sec->job != NULL &&
		    !conf_url_has_scheme(*sec->dest, conf_http_schemes)) {
			conf_secret_free(*sec->dest);
			*sec->dest = NULL;
			*errstr =
			    xasprintf("%s: %s does not hold an http:// or "
			              "https:// URL",
			        sec->where, sec->path);
			return -2;
		}
	}
	return 0;
}

int
conf_read_secrets(struct conf *c, const char *channel, char **errstr)
{
	return conf_read_secrets_of(c, channel, NULL, errstr);
}

int
conf_read_job_secrets(struct conf *c, const char *job, char **errstr)
{
	return conf_read_secrets_of(c, NULL, job, errstr);
}

void
conf_protect_secrets(void)
{
	const char *e = getenv("CRONGUARD_DUMPABLE");

	if (e != NULL && strcmp(e, "1") == 0)
		return;
	/* Cannot fail for 0; a job's execve makes the job dumpable again. */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
