/* migrate.h: placeholder. */
