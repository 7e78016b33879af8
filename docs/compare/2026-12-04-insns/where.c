/*
 * A QEMU TCG plugin (QEMU 7.2, plugin API version 1) that counts the guest
 * instructions every vCPU executes between two marker instructions, split
 * into user and kernel addresses, with the busiest code pages. The markers
 * are long NOPs no compiler emits: nopl 0x52444d42(%rax) opens a window,
 * nopl 0x52444d43(%rax) closes it and appends a report to out=FILE;
 * nopl 0x52444d44(%rax), once an iteration, counts them.
 * Why: under TCG time follows the instructions executed (and the software
 * TLB's refills); counting them in the loop's window compares two builds'
 * work per iteration with no host noise in the figure.
 *
 * The declarations below are the few of QEMU's plugin API this uses,
 * written out here because Debian ships no qemu-plugin.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
typedef void (*tb_trans_cb)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*vcpu_udata_cb)(unsigned int vcpu, void *udata);
typedef uint32_t qemu_plugin_meminfo_t;
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };
typedef void (*vcpu_mem_cb)(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *, vcpu_mem_cb, enum qemu_plugin_cb_flags,
	enum qemu_plugin_mem_rw, void *);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, tb_trans_cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *, size_t);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *, vcpu_udata_cb, enum qemu_plugin_cb_flags, void *);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *, vcpu_udata_cb, enum qemu_plugin_cb_flags, void *);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define NCPU 16
/* the kernel half with 5-level paging (QEMU's -cpu max has la57) */
#define KERNEL(va) ((va) >= 0xff00000000000000ull)

struct tbinfo {
	uint64_t va;
	unsigned n;
	uint64_t count[NCPU];
	struct tbinfo *next;
};

static struct tbinfo *tbs;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int active;
static uint64_t insns[NCPU][2], execs[NCPU][2];
static FILE *out;
static int mem = 1; /* mem=off: count instructions only (fast enough for whole processes) */
static int window;
static uint64_t iters;

/* The distinct pages (code and data) one iteration touches on a vCPU: under
 * TCG each costs a software-TLB refill whenever the TLB was flushed. */
#define SLOTS 4096
struct pageset {
	uint64_t page[SLOTS];
	uint32_t gen[SLOTS];
	uint32_t g;
	uint64_t n[2];
	uint64_t last[256];
	int nlast;
};
static struct pageset sets[NCPU];
static uint64_t distinct[NCPU][2], counted[NCPU];

static void touch(unsigned vcpu, uint64_t va) {
	if (!active || vcpu >= NCPU)
		return;
	struct pageset *s = &sets[vcpu];
	uint64_t pg = va >> 12;
	uint32_t h = (uint32_t)((pg * 0x9e3779b97f4a7c15ull) >> 52);
	while (s->gen[h] == s->g && s->page[h] != pg)
		h = (h + 1) & (SLOTS - 1);
	if (s->gen[h] == s->g)
		return;
	s->gen[h] = s->g;
	s->page[h] = pg;
	s->n[KERNEL(va)]++;
	if (!KERNEL(va) && s->nlast < 256)
		s->last[s->nlast++] = va & ~0xfffull;
}

static void end_iteration(unsigned vcpu) {
	struct pageset *s = &sets[vcpu];
	distinct[vcpu][0] += s->n[0];
	distinct[vcpu][1] += s->n[1];
	counted[vcpu]++;
	s->n[0] = s->n[1] = 0;
	s->g++;
}

/* A model of QEMU's software TLB for data: per privilege (QEMU keeps one
 * table per MMU index), a direct-mapped table indexed by the page number's
 * low bits, behind it an 8-entry victim table filled round robin with the
 * entries the main table evicts. Three table sizes, since QEMU resizes its
 * tables at flushes (256 entries to start). */
#define NSIZES 3
static const unsigned sizes[NSIZES] = {256, 1024, 4096};
struct tlb {
	uint64_t main[4096];
	uint64_t victim[8];
	unsigned vi;
	uint64_t vhits, misses;
};
static struct tlb tlbs[NCPU][2][NSIZES];

static void tlb_access(struct tlb *t, unsigned size, uint64_t pg) {
	uint64_t key = pg + 1;
	unsigned i = pg & (size - 1);
	if (t->main[i] == key)
		return;
	for (int v = 0; v < 8; v++)
		if (t->victim[v] == key) {
			t->victim[v] = t->main[i];
			t->main[i] = key;
			t->vhits++;
			return;
		}
	t->victim[t->vi++ & 7] = t->main[i];
	t->main[i] = key;
	t->misses++;
}

static void on_mem(unsigned vcpu, qemu_plugin_meminfo_t info, uint64_t va, void *u) {
	(void)info;
	touch(vcpu, va);
	if (!active || vcpu >= NCPU)
		return;
	int k = u != NULL;
	for (int z = 0; z < NSIZES; z++)
		tlb_access(&tlbs[vcpu][k][z], sizes[z], va >> 12);
}

static void on_tb(unsigned vcpu, void *u) {
	struct tbinfo *t = u;
	if (!active || vcpu >= NCPU)
		return;
	t->count[vcpu]++;
	touch(vcpu, t->va);
	int k = KERNEL(t->va);
	insns[vcpu][k] += t->n;
	execs[vcpu][k]++;
}

struct page { uint64_t page, insns; };

static int bypage(const void *a, const void *b) {
	const struct page *x = a, *y = b;
	return x->insns < y->insns ? 1 : x->insns > y->insns ? -1 : 0;
}

static void report(unsigned vcpu) {
	window++;
	fprintf(out, "window %d closed on vcpu %u iterations %llu\n", window, vcpu, (unsigned long long)iters);
	for (int c = 0; c < NCPU; c++)
		if (counted[c])
			fprintf(out, "vcpu %d distinct pages an iteration: user %.2f kernel %.2f (%llu iterations)\n", c,
				(double)distinct[c][0] / counted[c], (double)distinct[c][1] / counted[c],
				(unsigned long long)counted[c]);
	for (int c = 0; c < NCPU; c++)
		for (int k = 0; k < 2 && counted[c]; k++)
			for (int z = 0; z < NSIZES; z++) {
				struct tlb *t = &tlbs[c][k][z];
				fprintf(out, "vcpu %d %s tlb %u: victim hits %.2f misses %.2f an iteration\n", c,
					k ? "kernel" : "user", sizes[z], (double)t->vhits / counted[c],
					(double)t->misses / counted[c]);
			}
	for (int c = 0; c < NCPU; c++)
		if (insns[c][0] + insns[c][1])
			fprintf(out, "vcpu %d user %llu kernel %llu tbs user %llu kernel %llu\n", c,
				(unsigned long long)insns[c][0], (unsigned long long)insns[c][1],
				(unsigned long long)execs[c][0], (unsigned long long)execs[c][1]);
	/* the busiest code pages, all vCPUs together */
	size_t cap = 1024, np = 0;
	struct page *p = calloc(cap, sizeof *p);
	pthread_mutex_lock(&mu);
	/* user code run at least once an iteration: the loop's own path */
	for (struct tbinfo *t = tbs; t; t = t->next)
		if (!KERNEL(t->va) && iters && t->count[vcpu] * 2 >= iters)
			fprintf(out, "usertb %llx insns %u execs %.2f\n", (unsigned long long)t->va, t->n,
				(double)t->count[vcpu] / iters);
	for (struct tbinfo *t = tbs; t; t = t->next) {
		uint64_t sum = 0;
		for (int c = 0; c < NCPU; c++) {
			sum += t->count[c];
			t->count[c] = 0;
		}
		if (!sum)
			continue;
		uint64_t pg = t->va >> 12;
		size_t i;
		for (i = 0; i < np && p[i].page != pg; i++)
			;
		if (i == np) {
			if (np == cap)
				p = realloc(p, (cap *= 2) * sizeof *p);
			p[np].page = pg;
			p[np++].insns = 0;
		}
		p[i].insns += sum * t->n;
	}
	pthread_mutex_unlock(&mu);
	qsort(p, np, sizeof *p, bypage);
	for (size_t i = 0; i < np && i < 40; i++)
		fprintf(out, "page %016llx %llu\n", (unsigned long long)p[i].page << 12,
			(unsigned long long)p[i].insns);
	fprintf(out, "pages %zu\n", np);
	fflush(out);
	free(p);
	memset(insns, 0, sizeof insns);
	memset(execs, 0, sizeof execs);
}

static void on_mark(unsigned vcpu, void *u) {
	if (u == (void *)2) {
		if (iters++ && vcpu < NCPU) {
			/* keep the user pages of the iteration before the last */
			if (iters == 3) {
				fprintf(out, "user pages of iteration 2:");
				for (int i = 0; i < sets[vcpu].nlast; i++)
					fprintf(out, " %llx", (unsigned long long)sets[vcpu].last[i]);
				fprintf(out, "\n");
			}
			end_iteration(vcpu);
		}
		sets[vcpu].nlast = 0;
		return;
	}
	if (u) {
		active = 0;
		report(vcpu);
		return;
	}
	memset(insns, 0, sizeof insns);
	memset(execs, 0, sizeof execs);
	memset(distinct, 0, sizeof distinct);
	for (int c = 0; c < NCPU; c++)
		for (int k = 0; k < 2; k++)
			for (int z = 0; z < NSIZES; z++)
				tlbs[c][k][z].vhits = tlbs[c][k][z].misses = 0;
	memset(counted, 0, sizeof counted);
	for (int c = 0; c < NCPU; c++) {
		sets[c].g++;
		sets[c].n[0] = sets[c].n[1] = 0;
	}
	iters = 0;
	active = 1;
}

static void on_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
	(void)id;
	struct tbinfo *t = calloc(1, sizeof *t);
	t->va = qemu_plugin_tb_vaddr(tb);
	t->n = qemu_plugin_tb_n_insns(tb);
	pthread_mutex_lock(&mu);
	t->next = tbs;
	tbs = t;
	pthread_mutex_unlock(&mu);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb, QEMU_PLUGIN_CB_NO_REGS, t);
	for (size_t i = 0; i < t->n; i++) {
		struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);
		if (mem)
			qemu_plugin_register_vcpu_mem_cb(in, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
			KERNEL(qemu_plugin_insn_vaddr(in)) ? (void *)1 : NULL);
		const unsigned char *b = qemu_plugin_insn_data(in);
		if (qemu_plugin_insn_size(in) == 7 && b[0] == 0x0f && b[1] == 0x1f && b[2] == 0x80 &&
		    b[4] == 0x4d && b[5] == 0x44 && b[6] == 0x52 && b[3] >= 0x42 && b[3] <= 0x44)
			qemu_plugin_register_vcpu_insn_exec_cb(in, on_mark, QEMU_PLUGIN_CB_NO_REGS,
				(void *)(uintptr_t)(b[3] - 0x42));
	}
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc, char **argv) {
	(void)info;
	const char *path = "where.txt";
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strcmp(argv[i], "mem=off"))
			mem = 0;
	if (!(out = fopen(path, "a")))
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_trans);
	return 0;
}
