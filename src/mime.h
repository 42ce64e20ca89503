/* mime.h: placeholder. */
