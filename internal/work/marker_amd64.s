#include "textflag.h"

// The plugin's markers (internal/vm/insns/plugin/insns.c): the 7-byte NOP
// nopl 0x52444dXX(%rax), one instruction on hardware.

// func markReset()
TEXT ·markReset(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x47; BYTE $0x4d; BYTE $0x44; BYTE $0x52
	RET

// func markReport()
TEXT ·markReport(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x48; BYTE $0x4d; BYTE $0x44; BYTE $0x52
	RET

// func markCloseAll()
TEXT ·markCloseAll(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x44; BYTE $0x4d; BYTE $0x44; BYTE $0x52
	RET

// func markBit0()
TEXT ·markBit0(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x4b; BYTE $0x4d; BYTE $0x44; BYTE $0x52
	RET

// func markBit1()
TEXT ·markBit1(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x4c; BYTE $0x4d; BYTE $0x44; BYTE $0x52
	RET

// func markValue()
TEXT ·markValue(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x4d; BYTE $0x4d; BYTE $0x44; BYTE $0x52
	RET

// func markTable()
TEXT ·markTable(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x4e; BYTE $0x4d; BYTE $0x44; BYTE $0x52
	RET
