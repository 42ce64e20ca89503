/* outbox.h: placeholder. */
