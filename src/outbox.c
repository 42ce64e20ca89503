/* outbox.c: placeholder until the module lands. */
extern int cronguard_placeholder_outbox;
