/* lock.h: placeholder. */
