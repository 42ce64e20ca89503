/* guard.h: placeholder. */
