/*
 * conf-print.h: what config check prints (cronguard(1), config check):
 * the effective configuration in libconfig syntax, every secret masked.
 */
#ifndef CRONGUARD_CONF_PRINT_H
#define CRONGUARD_CONF_PRINT_H

struct conf;

/*
 * The configuration c as text that reads back as the same configuration
 * (defaults written out), with inline secrets, URL userinfo and queries
 * and the values of headers not known to be harmless masked, then the
 * secret files and the commands that read them as comments.  Returns an
 * allocated string (the caller frees it); prints nothing.
 */
char *conf_print_text(const struct conf *c);

#endif
