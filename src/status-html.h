/*
 * status-html.h: the page of "cronguard status --html" (cronguard(1),
 * status): one self-contained HTML file, inline CSS and SVG, no script and
 * nothing fetched from elsewhere.  The writer never prints; it returns the
 * page.
 */
#ifndef CRONGUARD_STATUS_HTML_H
#define CRONGUARD_STATUS_HTML_H

#include <stddef.h>

#include "status.h"
#include "util.h"

/*
 * The project's one HTML escaper: len bytes of s (which may hold
 * anything) appended to b as text that is safe between tags and inside a
 * double- or single-quoted attribute: & < > " ' as character references;
 * a C0 control byte or DEL as its visible Control Pictures sign (ESC as
 * U+241B), tab and newline kept; a byte that is not well-formed UTF-8, a
 * C1 control and a bidirectional override or isolate as U+FFFD.
 */
void status_html_escape(struct buf *b, const char *s, size_t len);
/* The same for a NUL-terminated string; NULL appends nothing. */
void status_html_escapes(struct buf *b, const char *s);

/*
 * The page for s (allocated, NUL-terminated; the caller frees it).  When
 * s->error is set the page says first and plainly that the database could
 * not be read, when (host_now, this host's clock) and why, and shows
 * nothing as current.  host is the host that wrote the page.
 */
char *status_html(
    const struct status *s, const char *host_now, const char *host);

#endif
