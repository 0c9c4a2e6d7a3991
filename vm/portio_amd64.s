#include "textflag.h"

// func outbTimed(port uint16, val uint8) (before, after uint64)
TEXT ·outbTimed(SB), NOSPLIT, $0-24
	MOVW port+0(FP), CX
	MOVB val+2(FP), BX
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, R8
	MOVW CX, DX
	MOVB BX, AX
	OUTB
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ R8, before+8(FP)
	MOVQ AX, after+16(FP)
	RET

// func outb(port uint16, val uint8)
TEXT ·outb(SB), NOSPLIT, $0-3
	MOVW port+0(FP), DX
	MOVB val+2(FP), AX
	OUTB
	RET

// func outw(port uint16, val uint16)
TEXT ·outw(SB), NOSPLIT, $0-4
	MOVW port+0(FP), DX
	MOVW val+2(FP), AX
	OUTW
	RET

// func inb(port uint16) uint8
TEXT ·inb(SB), NOSPLIT, $0-9
	MOVW port+0(FP), DX
	INB
	MOVB AX, ret+8(FP)
	RET
