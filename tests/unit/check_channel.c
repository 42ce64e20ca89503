/* check_channel.c: the table of channels (channel.c, from conf.h's
 * CHANNEL_TYPES): every type named once and found by the dispatcher, the
 * amqp row empty exactly when it is not built; channel_check's verdict on a
 * payload before a row exists; and the amqp routing_key template. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "conf.h"
#include "testutil.h"
#ifdef HAVE_AMQP
#include "channel-amqp.h"
#endif

START_TEST(table_names_and_ops)
{
	int i, k;

	for (i = 0; i < CHANNEL_NTYPES; i++) {
		const char *name = conf_channel_type_name((enum channel_type)i);

		ck_assert(strcmp(name, "?") != 0 && name[0] != '\0');
		for (k = 0; k < i; k++)
			ck_assert_str_ne(
			    name, conf_channel_type_name((enum channel_type)k));
		if (i == CHANNEL_AMQP) {
#ifdef HAVE_AMQP
			ck_assert_ptr_nonnull(channel_ops_for(CHANNEL_AMQP));
#else
			ck_assert_ptr_null(channel_ops_for(CHANNEL_AMQP));
#endif
			continue;
		}
		ck_assert_ptr_nonnull(channel_ops_for((enum channel_type)i));
		ck_assert_ptr_nonnull(
		    channel_ops_for((enum channel_type)i)->open);
	}
	ck_assert_str_eq(conf_channel_type_name(CHANNEL_SMTP), "smtp");
	ck_assert_str_eq(conf_channel_type_name(CHANNEL_HTTP), "http");
	ck_assert_str_eq(conf_channel_type_name(CHANNEL_AMQP), "amqp");
	ck_assert_ptr_null(channel_ops_for(CHANNEL_NTYPES));
	ck_assert_ptr_null(channel_ops_for((enum channel_type) - 1));
	ck_assert_str_eq(conf_channel_type_name(CHANNEL_NTYPES), "?");
}
END_TEST

/* channel_check judges a payload as the channel would at send time: an
 * http payload is any JSON text; an smtp one needs its fields. */
START_TEST(check_payloads)
{
	struct conf_channel cc;
	char               *why = NULL;
	const char         *mail =
	    "{\"to\":\"a@example.org\",\"subject\":\"s\",\"text\":\"t\"}";

	memset(&cc, 0, sizeof cc);
	cc.name = "hook";
	cc.type = CHANNEL_HTTP;
	cc.max_size = 1024;
	ck_assert_int_eq(channel_check(&cc, "{\"a\":1}", 7, &why), 0);
	ck_assert_ptr_null(why);
	cc.name = "mail";
	cc.type = CHANNEL_SMTP;
	cc.from = "noreply@example.org";
	cc.max_size = 1024 * 1024;
	ck_assert_int_ne(channel_check(&cc, "{\"a\":1}", 7, &why), 0);
	ck_assert_ptr_nonnull(why);
	free(why);
	why = NULL;
	ck_assert_int_eq(channel_check(&cc, mail, strlen(mail), &why), 0);
	ck_assert_ptr_null(why);
}
END_TEST

#ifdef HAVE_AMQP
/* {event_type}, {ordering_key}, {payload.NAME} (a top-level string);
 * anything else literal; a field that is absent or not a string empty. */
START_TEST(amqp_routing_key)
{
	struct outbox_msg m;
	char             *k;
	static char       payload[] =
	    "{\"region\":\"eu\",\"n\":3,\"o\":{\"x\":\"y\"}}";

	memset(&m, 0, sizeof m);
	m.event_type = "order.paid";
	m.ordering_key = "cust-7";
	m.payload = payload;
	m.payload_len = strlen(payload);
	k = channel_amqp_routing_key(NULL, &m);
	ck_assert_str_eq(k, "order.paid");
	free(k);
	k = channel_amqp_routing_key(
	    "{payload.region}.{event_type}.{ordering_key}", &m);
	ck_assert_str_eq(k, "eu.order.paid.cust-7");
	free(k);
	k = channel_amqp_routing_key("x.{payload.n}{payload.o}{payload.z}", &m);
	ck_assert_str_eq(k, "x.");
	free(k);
	k = channel_amqp_routing_key("{nope}.{event_type", &m);
	ck_assert_str_eq(k, "{nope}.{event_type");
	free(k);
	m.ordering_key = NULL;
	k = channel_amqp_routing_key("k.{ordering_key}", &m);
	ck_assert_str_eq(k, "k.");
	free(k);
	m.payload = (char *)"not json";
	m.payload_len = 8;
	k = channel_amqp_routing_key("{payload.region}!", &m);
	ck_assert_str_eq(k, "!");
	free(k);
}
END_TEST
#endif

static Suite *
channel_suite(void)
{
	Suite *s = suite_create("channel");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, table_names_and_ops);
	tcase_add_test(tc, check_payloads);
#ifdef HAVE_AMQP
	tcase_add_test(tc, amqp_routing_key);
#endif
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return testutil_main(channel_suite);
}
