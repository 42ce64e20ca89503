/*
 * http-payload-fuzzer.c: the HTTP channel's payload path on arbitrary
 * bytes: channel_http_check (may this payload and message id be sent),
 * channel_http_sign (the Standard Webhooks signature of what is sent) and
 * channel_http_error (last_error from an answer's status and body).
 *
 * Input: one byte selecting a message id, two bytes of status, then the
 * payload, which is also used as the answer's body.  Never crashes or
 * leaks; a check that fails says why; an accepted payload is a JSON object
 * or array; a signature is "v1," and base64 within CHANNEL_HTTP_SIG_LEN;
 * last_error starts "http NNN", holds no control character and no invalid
 * UTF-8, and stays short (at most 200 bytes of body, each replaced
 * character at most 3 bytes).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel-http.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const http_fuzz_ids[] = {
	"0b0f6f3e-6d55-4a43-9a49-6f7e3d1c2b10",
	"",
	"bad id\r\nX-Injected: 1",
	"a.b:c_d-1",
};

/* Whether s[0..len) is valid UTF-8 without control characters. */
static int
http_fuzz_clean(const unsigned char *s, size_t len)
{
	size_t i = 0, k, n;

	while (i < len) {
		if (s[i] < 0x20 || s[i] == 0x7f)
			return 0;
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if (s[i] >= 0xc2 && s[i] <= 0xdf)
			n = 1;
		else if (s[i] >= 0xe0 && s[i] <= 0xef)
			n = 2;
		else if (s[i] >= 0xf0 && s[i] <= 0xf4)
			n = 3;
		else
			return 0;
		for (k = 1; k <= n; k++) {
			if (i + k >= len || (s[i + k] & 0xc0) != 0x80)
				return 0;
		}
		i += n + 1;
	}
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct outbox_msg          msg;
	char                       sig[CHANNEL_HTTP_SIG_LEN], head[32];
	char                      *why = NULL, *err = NULL, *payload;
	const char                *id;
	long                       status;
	size_t                     i, hl;
	static const unsigned char key[] = "whsec-fuzz-key";

	if (size < 3)
		return 0;
	id = http_fuzz_ids[data[0] %
	    (sizeof http_fuzz_ids / sizeof http_fuzz_ids[0])];
	status = (long)((data[1] << 8) | data[2]) % 1000;
	data += 3;
	size -= 3;
	payload = malloc(size + 1);
	if (payload == NULL)
		return 0;
	memcpy(payload, data, size);
	payload[size] = '\0';

	memset(&msg, 0, sizeof msg);
	snprintf(msg.message_id, sizeof msg.message_id, "%s", id);
	msg.payload = payload;
	msg.payload_len = size;
	if (channel_http_check(&msg, &why) == 0) {
		if (why != NULL)
			abort();
		for (i = 0; i < size && strchr(" \t\r\n", payload[i]); i++)
			;
		if (i == size || (payload[i] != '{' && payload[i] != '['))
			abort(); /* accepted something not an object/array */
		if (channel_http_sign(key, sizeof key - 1, msg.message_id,
		        1700000000LL, payload, size, sig) == 0) {
			if (strncmp(sig, "v1,", 3) != 0 ||
			    strlen(sig) >= sizeof sig)
				abort();
			for (i = 3; sig[i] != '\0'; i++) {
				if (strchr(
				        "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				        "abcdefghijklmnopqrstuvwxyz0123456789"
				        "+/=",
				        sig[i]) == NULL)
					abort();
			}
		}
	} else if (why == NULL || *why == '\0')
		abort(); /* refused without a reason */

	err = channel_http_error(status, payload, size);
	hl = (size_t)snprintf(head, sizeof head, "http %ld", status);
	if (err == NULL || strncmp(err, head, hl) != 0 ||
	    !http_fuzz_clean((const unsigned char *)err, strlen(err)) ||
	    strlen(err) > hl + 2 + 3 * 200)
		abort();

	free(err);
	free(why);
	free(payload);
	return 0;
}
