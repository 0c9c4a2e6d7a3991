/* entries calls three functions of one body, each beginning differently,
 * N times each (argv[1]) once a line arrives on standard input:
 * tg_push begins with push %rbx, which the kernel emulates under a
 * uprobe; tg_endbr with endbr64 and then the same push; tg_xor with an
 * xor, which the kernel single-steps. Build with -fcf-protection=none so
 * that the compiler adds no endbr64 of its own. */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned long sink;

#define BODY "movq sink(%rip), %rax\n\taddq $1, %rax\n\tmovq %rax, sink(%rip)\n\tret\n"

__attribute__((naked, noinline)) void tg_push(void)
{
	__asm__ volatile("push %rbx\n\tpop %rbx\n\t" BODY);
}

__attribute__((naked, noinline)) void tg_endbr(void)
{
	__asm__ volatile("endbr64\n\tpush %rbx\n\tpop %rbx\n\t" BODY);
}

__attribute__((naked, noinline)) void tg_xor(void)
{
	__asm__ volatile("xor %eax, %eax\n\t" BODY);
}

int main(int argc, char **argv)
{
	char line[16];
	int n = argc > 1 ? atoi(argv[1]) : 1000;

	if (!fgets(line, sizeof line, stdin))
		return 1;
	for (int i = 0; i < n; i++) {
		tg_push();
		tg_endbr();
		tg_xor();
	}
	return 0;
}
