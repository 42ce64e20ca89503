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

#include "cmd.h"

static int
cmd_version_exec(struct cmd_ctx *ctx, struct conf *c)
{
	curl_version_info_data *cv;

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
	puts("channels: smtp http amqp");
#else
	puts("channels: smtp http (built --without-amqp)");
#endif
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
