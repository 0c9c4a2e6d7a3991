/* exits: functions whose exits the return-site finder's tests know from
 * their source. The naked ones are written in assembly, so that the
 * compiler decides nothing about them; tg_branchy is C, compiled as the
 * compiler likes. Built with -fcf-protection=none: no endbr64. */
volatile int sink;

/* Two returns: x == 0 returns 0, else 1. */
__attribute__((naked, noinline)) int tg_two_rets(int x)
{
	__asm__ volatile("test %edi, %edi\n\tje 1f\n\tmov $1, %eax\n\tret\n1:\n\txor %eax, %eax\n\tret\n");
}

/* One return, with four C3 bytes in an immediate before it. */
__attribute__((naked, noinline)) int tg_c3_imm(void)
{
	__asm__ volatile("mov $0xc3c3c3c3, %eax\n\tret\n");
}

/* A return that pops 8 bytes of arguments (C2 08 00), then a plain one. */
__attribute__((naked, noinline)) void tg_ret_imm(void)
{
	__asm__ volatile("test %edi, %edi\n\tje 1f\n\tret $8\n1:\n\tret\n");
}

/* No return of its own: a tail call, conditional and then not. */
__attribute__((naked, noinline)) int tg_tail(int x)
{
	__asm__ volatile("test %edi, %edi\n\tjne tg_two_rets\n\tjmp tg_c3_imm\n");
}

/* A vector epilogue: VZEROUPPER, then RET. */
__attribute__((naked, noinline)) void tg_vzeroupper(void)
{
	__asm__ volatile("vzeroupper\n\tret\n");
}

/* C with three outcomes; how many RETs is the compiler's choice. */
__attribute__((noinline)) int tg_branchy(int x)
{
	if (x < 0)
		return -1;
	for (int i = 0; i < x; i++)
		sink += i;
	if (x > 100)
		return sink;
	return 0;
}

int main(int argc, char **argv)
{
	(void)argv;
	return tg_two_rets(argc) + tg_c3_imm() + tg_tail(argc) + tg_branchy(argc);
}
