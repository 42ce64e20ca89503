/* check_http.c: the HTTP channel's signature, classification, payload
 * check and error text, and its send loop against a closed port (no
 * server needed): connection errors are transient, the send hooks and
 * the stop flag leave messages unsent.  Sends to a real server are in
 * tests/integration/t04*. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <curl/curl.h>

#include "channel-http.h"
#include "channel.h"
#include "testutil.h"

START_TEST(test_standard_webhooks_vector)
{
	/* The test vector of the Standard Webhooks reference libraries. */
	unsigned char *key = NULL;
	size_t         keylen = 0;
	char           sig[CHANNEL_HTTP_SIG_LEN];
	const char    *body = "{\"test\": 2432232314}";

	ck_assert_int_eq(
	    whsec_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", &key, &keylen),
	    0);
	ck_assert_uint_eq(keylen, 24);
	ck_assert_int_eq(
	    channel_http_sign(key, keylen, "msg_p5jXN8AQM9LWM0D4loKWxJek",
	        1614265330, body, strlen(body), sig),
	    0);
	ck_assert_str_eq(
	    sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
	free(key);
}
END_TEST

START_TEST(test_secret_forms)
{
	unsigned char *key = NULL;
	size_t         keylen = 0;

	ck_assert_int_eq(whsec_key("plain", &key, &keylen), 0);
	ck_assert_uint_eq(keylen, 5);
	ck_assert(memcmp(key, "plain", 5) == 0);
	free(key);
	key = NULL;
	ck_assert_int_eq(whsec_key("whsec_YWI=", &key, &keylen), 0);
	ck_assert_uint_eq(keylen, 2);
	ck_assert(memcmp(key, "ab", 2) == 0);
	free(key);
	key = NULL;
	ck_assert_int_eq(whsec_key("whsec_abc", &key, &keylen), -1);
	ck_assert_int_eq(whsec_key("whsec_", &key, &keylen), -1);
	ck_assert_int_eq(whsec_key("whsec_a!b=", &key, &keylen), -1);
}
END_TEST

START_TEST(test_secret_lines)
{
	/* The reference vector's secret twice over, around a raw one: each
	 * line is its own key, in order, one "v1," each. */
	struct whsec_keys k;
	const char       *body = "{\"test\": 2432232314}";
	char             *err = NULL, *sig;

	ck_assert_int_eq(
	    whsec_keys("  whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\r\n\n"
	               "plain \nwhsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	        &k, &err),
	    0);
	ck_assert_uint_eq(k.n, 3);
	ck_assert_uint_eq(k.len[0], 24);
	ck_assert_uint_eq(k.len[1], 5);
	sig = channel_http_signatures(
	    &k, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body, strlen(body));
	ck_assert_ptr_nonnull(sig);
	ck_assert(
	    strncmp(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1,",
	        51) == 0);
	ck_assert_str_eq(sig + strlen(sig) - 48,
	    " v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
	free(sig);
	whsec_keys_free(&k);

	ck_assert_int_eq(whsec_keys(" \n\r\n", &k, &err), -1);
	ck_assert_ptr_nonnull(strstr(err, "no secret"));
	free(err);
	err = NULL;
	ck_assert_int_eq(whsec_keys("plain\nwhsec_a!b=\n", &k, &err), -1);
	ck_assert_str_eq(err, "line 2: invalid base64 after whsec_");
	ck_assert_uint_eq(k.n, 0);
	free(err);
	err = NULL;
	ck_assert_int_eq(whsec_keys("1\n2\n3\n4\n5\n6\n7\n8\n9", &k, &err), -1);
	free(err);
}
END_TEST

START_TEST(test_classify)
{
	ck_assert_int_eq(channel_http_classify(200), SEND_OK);
	ck_assert_int_eq(channel_http_classify(204), SEND_OK);
	ck_assert_int_eq(channel_http_classify(299), SEND_OK);
	ck_assert_int_eq(channel_http_classify(408), SEND_RETRY);
	ck_assert_int_eq(channel_http_classify(425), SEND_RETRY);
	ck_assert_int_eq(channel_http_classify(429), SEND_RETRY);
	ck_assert_int_eq(channel_http_classify(500), SEND_RETRY);
	ck_assert_int_eq(channel_http_classify(503), SEND_RETRY);
	ck_assert_int_eq(channel_http_classify(599), SEND_RETRY);
	ck_assert_int_eq(channel_http_classify(400), SEND_PERMANENT);
	ck_assert_int_eq(channel_http_classify(401), SEND_PERMANENT);
	ck_assert_int_eq(channel_http_classify(404), SEND_PERMANENT);
	ck_assert_int_eq(channel_http_classify(410), SEND_PERMANENT);
	ck_assert_int_eq(channel_http_classify(422), SEND_PERMANENT);
	ck_assert_int_eq(channel_http_classify(301), SEND_PERMANENT);
	ck_assert_int_eq(channel_http_classify(100), SEND_PERMANENT);
	ck_assert_int_eq(channel_http_classify(0), SEND_PERMANENT);
}
END_TEST

static int
check_msg(const char *id, const char *payload, char **why)
{
	struct outbox_msg m;

	memset(&m, 0, sizeof m);
	snprintf(m.message_id, sizeof m.message_id, "%s", id);
	m.payload = (char *)payload;
	m.payload_len = strlen(payload);
	*why = NULL;
	return channel_http_check(&m, why);
}

START_TEST(test_payload_check)
{
	char *why = NULL;

	ck_assert_int_eq(check_msg("0b9f1e7c-3f5e-4a38-9c43-6d0e5a1f2b3c",
	                     "{\"a\": 1}", &why),
	    0);
	ck_assert_int_eq(check_msg("x", "[1, 2]", &why), 0);
	/* Valid JSON that jansson's integers cannot hold is still sent. */
	ck_assert_int_eq(check_msg("x",
	                     "{\"wei\": 123456789012345678901234567890, "
	                     "\"n\": -99999999999999999999}",
	                     &why),
	    0);
	ck_assert_int_eq(check_msg("x", "42", &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "not a JSON object or array"));
	free(why);
	ck_assert_int_eq(check_msg("x", "\"text\"", &why), -1);
	free(why);
	ck_assert_int_eq(check_msg("x", "{\"a\": ", &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "line 1"));
	free(why);
	ck_assert_int_eq(check_msg("a\r\nX-Evil: 1", "{}", &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "message_id"));
	free(why);
	ck_assert_int_eq(check_msg("", "{}", &why), -1);
	free(why);
}
END_TEST

START_TEST(test_error_text)
{
	char body[300], *e;

	e = channel_http_error(400, "{\"error\": \"bad\"}\n", 17);
	ck_assert_str_eq(e, "http 400: {\"error\": \"bad\"}");
	free(e);
	e = channel_http_error(503, "", 0);
	ck_assert_str_eq(e, "http 503");
	free(e);
	/* at most 200 bytes of body, control characters replaced */
	memset(body, 'x', sizeof body);
	body[3] = '\n';
	e = channel_http_error(500, body, sizeof body);
	ck_assert_uint_eq(strlen(e), strlen("http 500: ") + 200);
	ck_assert_int_eq(e[strlen("http 500: ") + 3], ' ');
	free(e);
	/* valid UTF-8 kept, a Latin-1 byte read as such, a cut sequence
	 * at the end dropped (peer_text) */
	e = channel_http_error(400, "\xec\x98\x88\xff\xec\x98", 6);
	ck_assert_str_eq(e, "http 400: \xec\x98\x88\xc3\xbf");
	free(e);
}
END_TEST

static struct conf_channel
closed_port_channel(void)
{
	struct conf_channel cc;

	memset(&cc, 0, sizeof cc);
	cc.name = "hook";
	cc.type = CHANNEL_HTTP;
	/* Port 1 on loopback: nothing listens, the connect is refused. */
	cc.url = "http://127.0.0.1:1/hook";
	cc.timeout_ms = 2000;
	cc.concurrency = 2;
	cc.method = "POST";
	return cc;
}

static int veto_id; /* before_send refuses this id */
static int after_calls;

static int
veto_before(struct send_ctl *ctl, struct outbox_msg *m)
{
	(void)ctl;
	return (int)m->id == veto_id;
}

static void
count_after(struct send_ctl *ctl, struct outbox_msg *m)
{
	(void)ctl;
	(void)m;
	after_calls++;
}

static void
send_three(volatile sig_atomic_t *stop, struct outbox_msg *m)
{
	struct conf_channel cc = closed_port_channel();
	struct outbox_msg  *p[3];
	struct send_ctl     ctl;
	struct channel     *ch = NULL;
	char               *err = NULL;
	size_t              i;

	memset(&ctl, 0, sizeof ctl);
	ctl.before_send = veto_before;
	ctl.after_send = count_after;
	ctl.stop = stop;
	for (i = 0; i < 3; i++) {
		memset(&m[i], 0, sizeof m[i]);
		m[i].id = i + 1;
		snprintf(m[i].message_id, sizeof m[i].message_id, "id-%zu", i);
		m[i].payload = (char *)(i == 2 ? "7" : "{}");
		m[i].payload_len = strlen(m[i].payload);
		p[i] = &m[i];
	}
	ck_assert_int_eq(channel_http_ops.open(&cc, &ch, &err), 0);
	channel_http_ops.send(ch, p, 3, &ctl);
	channel_http_ops.close(ch);
}

START_TEST(test_send_connection_refused)
{
	volatile sig_atomic_t stop = 0;
	struct outbox_msg     m[3];
	size_t                i;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	veto_id = 2;
	after_calls = 0;
	send_three(&stop, m);
	/* refused connection: transient, with curl's reason */
	ck_assert_int_eq(m[0].result, SEND_RETRY);
	ck_assert_ptr_nonnull(m[0].error);
	ck_assert(strncmp(m[0].error, "http: ", 6) == 0);
	/* vetoed by before_send: not attempted */
	ck_assert_int_eq(m[1].result, SEND_NONE);
	ck_assert_ptr_null(m[1].error);
	/* a payload the channel cannot use: permanent, nothing sent */
	ck_assert_int_eq(m[2].result, SEND_PERMANENT);
	ck_assert_int_eq(after_calls, 2);
	for (i = 0; i < 3; i++)
		free(m[i].error);
	curl_global_cleanup();
}
END_TEST

START_TEST(test_send_stopped)
{
	volatile sig_atomic_t stop = 1;
	struct outbox_msg     m[3];
	size_t                i;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	veto_id = 0;
	after_calls = 0;
	send_three(&stop, m);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(m[i].result, SEND_NONE);
		ck_assert_ptr_null(m[i].error);
	}
	ck_assert_int_eq(after_calls, 0);
	curl_global_cleanup();
}
END_TEST

static Suite *
http_suite(void)
{
	Suite *s = suite_create("http");
	TCase *tc = tcase_create("http");

	tcase_add_test(tc, test_standard_webhooks_vector);
	tcase_add_test(tc, test_secret_forms);
	tcase_add_test(tc, test_secret_lines);
	tcase_add_test(tc, test_classify);
	tcase_add_test(tc, test_payload_check);
	tcase_add_test(tc, test_error_text);
	tcase_add_test(tc, test_send_connection_refused);
	tcase_add_test(tc, test_send_stopped);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(http_suite);
}
