/* sleeper: after a line on stdin, calls tg_sleep(NS) N times and tg_nop
 * 3N times, then prints the median of its own timing of the tg_sleep
 * calls, in ns. Usage: sleeper N NS */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/prctl.h>

void tg_sleep(long ns);
int tg_nop(int x);

static int cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

static long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	char line[16];
	long *d, ns;
	int n, i, sum = 0;

	if (argc != 3)
		return 2;
	n = atoi(argv[1]);
	ns = atol(argv[2]);
	d = calloc(n, sizeof(*d));
	if (n <= 0 || !d)
		return 2;
	/* The default 50 us of timer slack would be most of the spread. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (i = 0; i < n; i++) {
		long t0 = now();

		tg_sleep(ns);
		d[i] = now() - t0;
		sum += tg_nop(i) + tg_nop(i) + tg_nop(i);
	}
	qsort(d, n, sizeof(*d), cmp);
	printf("%ld %d\n", d[n / 2], sum);
	return 0;
}
