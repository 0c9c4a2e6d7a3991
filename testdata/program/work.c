/* work calls tg_op, a fixed busy loop of ITER steps, until it is killed.
 * Builds that differ only in ITER are builds whose measured operation is
 * really slower: cc -O2 -DITER=120000 -o work work.c is 20% more work
 * per call than the default. */
#ifndef ITER
#define ITER 100000
#endif

volatile unsigned long sink;

__attribute__((noinline)) void tg_op(void)
{
	for (unsigned long i = 0; i < ITER; i++)
		sink += i;
}

int main(void)
{
	for (;;)
		tg_op();
}
