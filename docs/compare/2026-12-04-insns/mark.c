// mark open|close: runs where.so's window markers (see where.c), so that a
// window can span whole processes: everything every vCPU executes from
// "mark open" to "mark close" is counted.
#include <string.h>

int main(int argc, char **argv) {
	if (argc != 2)
		return 2;
	if (strcmp(argv[1], "open") == 0)
		__asm__ volatile("nopl 0x52444d42(%%rax)" ::: "memory");
	else if (strcmp(argv[1], "close") == 0)
		__asm__ volatile("nopl 0x52444d43(%%rax)" ::: "memory");
	else
		return 2;
	return 0;
}
