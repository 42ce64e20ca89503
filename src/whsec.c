/* whsec.c: the keys of a Standard Webhooks signing secret (whsec.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "util.h"
#include "whsec.h"

int
whsec_key(const char *secret, unsigned char **key, size_t *keylen)
{
	const char    *b64;
	size_t         len, pad = 0;
	unsigned char *out;
	int            n;

	if (strncmp(secret, "whsec_", 6) != 0) {
		*keylen = strlen(secret);
		*key = (unsigned char *)xstrndup(secret, *keylen);
		return 0;
	}
	b64 = secret + 6;
	len = strlen(b64);
	if (len == 0 || len % 4 != 0)
		return -1;
	if (b64[len - 1] == '=')
		pad++;
	if (b64[len - 2] == '=')
		pad++;
	out = xmalloc(len / 4 * 3 + 1);
	n = EVP_DecodeBlock(out, (const unsigned char *)b64, (int)len);
	if (n < 0 || (size_t)n < pad) {
		free(out);
		return -1;
	}
	/* EVP_DecodeBlock counts the padding as zero bytes. */
	*key = out;
	*keylen = (size_t)n - pad;
	return 0;
}

int
whsec_keys(const char *secrets, struct whsec_keys *k, char **errstr)
{
	const char *p, *end, *nl;
	char       *line;
	int         lineno = 0;

	memset(k, 0, sizeof *k);
	for (p = secrets; *p != '\0'; p = *nl != '\0' ? nl + 1 : nl) {
		lineno++;
		if ((nl = strchr(p, '\n')) == NULL)
			nl = p + strlen(p);
		while (p < nl && (*p == ' ' || *p == '\t'))
			p++;
		end = nl;
		while (end > p &&
		    (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			end--;
		if (end == p)
			continue;
		if (k->n == WHSEC_MAX) {
			*errstr = xasprintf("more than %d secrets", WHSEC_MAX);
			goto fail;
		}
		line = xstrndup(p, (size_t)(end - p));
		if (whsec_key(line, &k->key[k->n], &k->len[k->n]) != 0) {
			explicit_bzero(line, strlen(line));
			free(line);
			*errstr = xasprintf(
			    "line %d: invalid base64 after whsec_", lineno);
			goto fail;
		}
		explicit_bzero(line, strlen(line));
		free(line);
		k->n++;
	}
	if (k->n == 0) {
		*errstr = xstrdup("no secret in it (blank lines only)");
		goto fail;
	}
	return 0;
fail:
	whsec_keys_free(k);
	return -1;
}

void
whsec_keys_free(struct whsec_keys *k)
{
	size_t i;

	for (i = 0; i < k->n; i++) {
		OPENSSL_cleanse(k->key[i], k->len[i]);
		free(k->key[i]);
	}
	memset(k, 0, sizeof *k);
}
