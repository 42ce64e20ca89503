/*
 * whsec.h: the keys of a Standard Webhooks signing secret
 * (cronguard.conf(5), signing_secret): "whsec_" followed by base64 is
 * decoded (OpenSSL's EVP_DecodeBlock), any other string is used as raw
 * bytes; a file may hold several, one a line.  Read by the HTTP channel
 * to sign, and by the configuration when the secret is loaded, so that a
 * secret the channel cannot use is a configuration error (78) before a
 * dispatch.
 */
#ifndef CRONGUARD_WHSEC_H
#define CRONGUARD_WHSEC_H

#include <stddef.h>

/*
 * The signing key of one secret.  Returns 0 with *key allocated (caller
 * frees), or -1 when the base64 after "whsec_" is empty or invalid.
 */
int whsec_key(const char *secret, unsigned char **key, size_t *keylen);

/*
 * The signing keys of a signing_secret(_file) value: one secret a line
 * (blank lines and spaces around a secret ignored, CR LF as LF), each as
 * whsec_key reads it, at most WHSEC_MAX.  Returns 0 with k filled (free
 * with whsec_keys_free), or -1 with *errstr allocated: no secret at all,
 * too many, or a line whose base64 is invalid (named by its number).
 */
#define WHSEC_MAX 8
struct whsec_keys {
	unsigned char *key[WHSEC_MAX];
	size_t         len[WHSEC_MAX];
	size_t         n;
};
int  whsec_keys(const char *secrets, struct whsec_keys *k, char **errstr);
void whsec_keys_free(struct whsec_keys *k);

#endif
