/* work calls tg_op, ITER steps of a fixed busy loop, until it is killed.
 * Builds that differ only in ITER are builds whose measured operation is
 * really slower: cc -O2 -DITER=240 -o work work.c does 20% more work per
 * call than the default (about 6 µs a call on a 2 GHz core).
 *
 * tg_op calls step, which the compiler may not look into (noipa), so
 * tg_op keeps its counter in a callee-saved register and begins with
 * push %rbx, as most functions that call others do. The kernel emulates a
 * push under a uprobe; an instruction it cannot emulate (the xor or mov a
 * leaf function begins with, or endbr64) it single-steps out of line on
 * every call, and the two traps that takes fall inside the measured time
 * (12 µs a call on an AMD EPYC VM, against 0.6 µs for an emulated push).
 * tailgate's ufunc tracer says so when a probed function begins that way. */
#ifndef ITER
#define ITER 200
#endif

volatile unsigned long sink;

__attribute__((noipa)) static void step(void)
{
	for (int j = 0; j < 100; j++)
		sink += j;
}

__attribute__((noinline)) void tg_op(void)
{
	for (unsigned long i = 0; i < ITER; i++)
		step();
}

int main(void)
{
	for (;;)
		tg_op();
}
