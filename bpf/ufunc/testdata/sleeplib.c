/* The functions the ufunc tests time, linked into sleeper or built as
 * libtgsleep.so. */
#define _GNU_SOURCE
#include <time.h>

/* tg_sleep sleeps ns nanoseconds. */
__attribute__((noinline)) void tg_sleep(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* tg_nop returns at once; the compiler must not drop its calls. */
__attribute__((noinline)) int tg_nop(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x;
}
