#include "textflag.h"

// undecodable begins with a byte no x86-64 instruction begins with, and
// is never called.
TEXT ·undecodable(SB), NOSPLIT, $0
	BYTE $0x06
	RET

// forever never returns: it has no RET.
TEXT ·forever(SB), NOSPLIT, $0
loop:
	PAUSE
	JMP loop

// asmret returns at once.
TEXT ·asmret(SB), NOSPLIT, $0
	RET
