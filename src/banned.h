/*
 * banned.h: functions the code must not call (git's banned.h list plus
 * atoi, strtok and gets; see doc/style.md).  Makefile.am force-includes this
 * header with -include, so a use is a compile error naming the function.
 * The system headers are included first, with config.h's feature macros,
 * so their own declarations are not rewritten.
 */
#ifndef CG_BANNED_H
#define CG_BANNED_H

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)

#undef sprintf
#undef vsprintf
#define sprintf(...) BANNED(sprintf)
#define vsprintf(...) BANNED(vsprintf)

#undef gmtime
#define gmtime(t) BANNED(gmtime)
#undef localtime
#define localtime(t) BANNED(localtime)
#undef ctime
#define ctime(t) BANNED(ctime)
#undef ctime_r
#define ctime_r(t, buf) BANNED(ctime_r)
#undef asctime
#define asctime(t) BANNED(asctime)
#undef asctime_r
#define asctime_r(t, buf) BANNED(asctime_r)

#undef atoi
#define atoi(s) BANNED(atoi)
#undef strtok
#define strtok(s, d) BANNED(strtok)
#undef gets
#define gets(s) BANNED(gets)

#endif
