/* backoff.h: placeholder. */
