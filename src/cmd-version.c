/* cmd-version.c: "version", with the libraries actually linked. */
#include "config.h"

#include <stdio.h>

#include <curl/curl.h>
#include <jansson.h>
#include <libconfig.h>
#include <mysql.h>
#include <openssl/crypto.h>
#ifdef HAVE_AMQP
#include <amqp.h>
#endif

#include "channel.h"
#include "cmd.h"

static int
cmd_version_exec(struct cmd_ctx *ctx, struct conf *c)
{
	curl_version_info_data *cv;
	int                     t;

	(void)ctx;
	(void)c;
	cv = curl_version_info(CURLVERSION_NOW);
	printf("cronguard %s\n", PACKAGE_VERSION);
	printf("libmariadb %s\n", mysql_get_client_info());
	printf("libcurl %s (%s)\n", cv->version,
	    cv->ssl_version != NULL ? cv->ssl_version : "no TLS");
	/* libconfig has no run-time version call: this is the header's. */
	printf("libconfig %d.%d.%d\n", LIBCONFIG_VER_MAJOR, LIBCONFIG_VER_MINOR,
	    LIBCONFIG_VER_REVISION);
	printf("jansson %s\n", jansson_version_str());
	printf("%s\n", OpenSSL_version(OPENSSL_VERSION));
#ifdef HAVE_AMQP
	printf("librabbitmq %s\n", amqp_version());
#endif
	fputs("channels:", stdout);
	for (t = 0; t < CHANNEL_NTYPES; t++)
		if (channel_ops_for((enum channel_type)t) != NULL)
			printf(" %s",
			    conf_channel_type_name((enum channel_type)t));
	for (t = 0; t < CHANNEL_NTYPES; t++)
		if (channel_ops_for((enum channel_type)t) == NULL)
			printf(" (built --without-%s)",
			    conf_channel_type_name((enum channel_type)t));
	putchar('\n');
	return EXIT_OK;
}

const struct cmd_entry cmd_version_entry = {
	.name = "version",
	.usage = "",
	.summary =
	    "Print the version and the versions of the linked libraries.",
	.flags = 0,
	.exec = cmd_version_exec,
};
