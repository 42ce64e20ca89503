/* limits.c: placeholder until the module lands. */
extern int cronguard_placeholder_limits;
