/*
 * bench-naive-relay.c: the "naive relay" baseline of scripts/bench-outbox.
 *
 * What many hand-written relays do: one row per transaction, the row lock
 * held while the message is sent.  Per message:
 *	START TRANSACTION
 *	SELECT ... WHERE status = 'PENDING' AND next_attempt_at <= NOW(6)
 *	    ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
 *	POST it (libcurl easy handle, reused: keep-alive, so the comparison
 *	    is about the database pattern, not connection set-up)
 *	UPDATE ... SET status = 'SENT' ... WHERE id = ?
 *	COMMIT
 * until nothing is due.  Not part of cronguard; built by the bench script:
 *	cc -O2 -o naive bench-naive-relay.c $(pkg-config --cflags --libs
 *	    libmariadb libcurl)
 * Usage: naive HOST PORT USER DATABASE URL  (empty password)
 * Prints the number of messages sent on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <mysql.h>

static void
die(MYSQL *m, const char *what)
{
	fprintf(stderr, "naive: %s: %s\n", what, m != NULL ? mysql_error(m) :
	    "failed");
	exit(1);
}

static void
q(MYSQL *m, const char *sql)
{
	if (mysql_query(m, sql) != 0)
		die(m, sql);
}

static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

int
main(int argc, char **argv)
{
	MYSQL		*m;
	MYSQL_RES	*res;
	MYSQL_ROW	 row;
	unsigned long	*len;
	CURL		*c;
	struct curl_slist *h = NULL;
	char		 sql[256], hdr[128];
	long		 status;
	unsigned long	 sent = 0;

	if (argc != 6) {
		fputs("usage: naive host port user database url\n", stderr);
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if ((m = mysql_init(NULL)) == NULL)
		die(NULL, "mysql_init");
	if (mysql_real_connect(m, argv[1], argv[3], "", argv[4],
	    (unsigned)strtoul(argv[2], NULL, 10), NULL, 0) == NULL)
		die(m, "connect");
	q(m, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_URL, argv[5]);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);

	for (;;) {
		q(m, "START TRANSACTION");
		q(m, "SELECT id, message_id, payload FROM outbox_messages"
		    " WHERE status = 'PENDING' AND next_attempt_at <= NOW(6)"
		    " ORDER BY next_attempt_at, id LIMIT 1"
		    " FOR UPDATE SKIP LOCKED");
		if ((res = mysql_store_result(m)) == NULL)
			die(m, "store");
		if ((row = mysql_fetch_row(res)) == NULL) {
			mysql_free_result(res);
			q(m, "COMMIT");
			break;
		}
		len = mysql_fetch_lengths(res);
		curl_slist_free_all(h);
		h = curl_slist_append(NULL, "Content-Type: application/json");
		snprintf(hdr, sizeof hdr, "webhook-id: %s", row[1]);
		h = curl_slist_append(h, hdr);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)len[2]);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, row[2]);
		status = 0;
		if (curl_easy_perform(c) == CURLE_OK)
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		snprintf(sql, sizeof sql, "UPDATE outbox_messages SET status ="
		    " '%s', attempts = attempts + 1, sent_at = NOW(6)"
		    " WHERE id = %s", status >= 200 && status < 300 ? "SENT" :
		    "FAILED", row[0]);
		mysql_free_result(res);
		q(m, sql);
		q(m, "COMMIT");
		sent++;
	}
	printf("%lu\n", sent);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	mysql_close(m);
	curl_global_cleanup();
	return 0;
}
