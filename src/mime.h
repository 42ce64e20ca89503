/*
 * mime.h: an outbox mail payload (cronguard-outbox(7), MAIL PAYLOAD) turned
 * into an SMTP envelope and a MIME message.
 *
 * Header fields are built here (RFC 5322 and RFC 2047: libcurl sends
 * header lines as given); the body parts, their transfer encodings and
 * the multipart boundary are libcurl's MIME API (mime_curl).
 */
#ifndef CRONGUARD_MIME_H
#define CRONGUARD_MIME_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

/* At most this many envelope recipients (to + cc + bcc): the number
 * RFC 5321 section 4.5.3.1.8 requires every server to accept. */
#define MIME_MAX_RCPT 100

struct mime_msg {
	char              *from; /* envelope sender, "addr@domain" */
	struct curl_slist *rcpt; /* envelope recipients: to, cc, bcc */
	size_t             nrcpt;
	struct curl_slist *headers; /* top-level header fields, ASCII,
	                             * folded; no Bcc */
	char  *text;                /* CRLF line ends, or NULL */
	size_t text_len;
	char  *html; /* CRLF line ends, or NULL */
	size_t html_len;
	size_t size; /* estimated size on the wire */
};

struct mime_opts {
	const char *from;       /* the channel's "Name <addr>" */
	const char *message_id; /* outbox message_id (a UUID) */
	int64_t     date;       /* unix seconds for the Date field */
	long long   max_size;   /* bytes; 0 = no limit */
};

/*
 * Build a message from payload (JSON text of len bytes).  Returns 0 with
 * *out allocated (free with mime_free), or -1 with *errstr an allocated
 * reason for last_error: every failure is permanent (the payload can
 * never be sent as it is): not an object, unknown key, missing or
 * malformed recipient, CR or LF in a header value or address (header
 * injection), a reserved or invalid extra header name, no body, too many
 * recipients, larger than max_size.
 */
int  mime_build(const char *payload, size_t len, const struct mime_opts *,
     struct mime_msg **out, char **errstr);
void mime_free(struct mime_msg *);

/*
 * Attach msg to easy for one SMTP transfer: CURLOPT_MAIL_FROM,
 * CURLOPT_MAIL_RCPT, CURLOPT_HTTPHEADER (the top-level header fields) and
 * CURLOPT_MIMEPOST.  Returns the curl_mime the caller frees with
 * curl_mime_free after the transfer (and after CURLOPT_MIMEPOST is reset),
 * or NULL with *errstr allocated.  msg must outlive the transfer.
 */
curl_mime *mime_curl(const struct mime_msg *, CURL *easy, char **errstr);

/*
 * Parse one mailbox: "addr@domain", "Name <addr@domain>" or
 * "\"Quoted, Name\" <addr@domain>".  Returns 0 with *addr (the addr-spec)
 * and *field (the mailbox as it goes into a header, display name quoted or
 * RFC 2047 encoded) allocated, or -1 with *why a static reason.
 */
int mime_parse_mailbox(
    const char *s, char **addr, char **field, const char **why);

/*
 * An unstructured header value (RFC 5322 section 3.2.5) as it goes after
 * "Name: ": printable ASCII as it is, anything else as RFC 2047 "B"
 * encoded-words of at most 75 characters, split on UTF-8 character
 * boundaries and folded with CRLF SP.  Allocated.
 */
char *mime_encode_text(const char *s);

/* Whether name is an RFC 5322 field name (printable ASCII but colon). */
int mime_field_name_valid(const char *name);

/* An RFC 5322 date-time for t, in UTC: "Sun, 29 Nov 2026 10:25:27 +0000". */
void mime_date(int64_t t, char *out, size_t outlen);

#endif
