/*
 * The plugin's output: the counts to out=FILE, and with profile=FILE the
 * profile's slots (one a part's start address) to FILE and FILE-kernel.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "insns.h"

struct slot *prof;
static int fd = -1;              /* out=FILE */
static int pfd = -1, pkfd = -1; /* profile=FILE and FILE-kernel */
static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER; /* inserts (translation) */

/* open_outputs opens out=path and, if ppath is not NULL, the profile's
 * files ppath and ppath-kernel, and allocates the profile. */
int open_outputs(const char *path, const char *ppath) {
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		perror(path);
		return -1;
	}
	if (ppath) {
		if ((pfd = open(ppath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
			perror(ppath);
			return -1;
		}
		size_t kl = strlen(ppath) + sizeof "-kernel";
		char *kpath = malloc(kl);
		if (kpath) {
			snprintf(kpath, kl, "%s-kernel", ppath);
			pkfd = open(kpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			free(kpath);
		}
		if (!(prof = calloc(PROF_SLOTS, sizeof *prof))) {
			fprintf(stderr, "rxevm insns plugin: no memory for the profile\n");
			return -1;
		}
	}
	return 0;
}

/* slot returns addr's profile slot, adding it (slot 0 when the table is
 * full or there is no profile). Linear probing; slot 0 is never probed. */
uint32_t slot(uint64_t addr) {
	if (!prof)
		return 0;
	uint32_t found = 0;
	pthread_mutex_lock(&prof_lock);
	uint32_t i = (uint32_t)((addr * 0x9e3779b97f4a7c15ull) >> (64 - PROF_BITS));
	for (uint32_t tries = 0; tries < PROF_SLOTS / 2; tries++, i = (i + 1) & (PROF_SLOTS - 1)) {
		if (i == 0)
			continue;
		if (prof[i].addr == addr) {
			found = i;
			break;
		}
		if (prof[i].addr == 0) {
			prof[i].addr = addr;
			found = i;
			break;
		}
	}
	pthread_mutex_unlock(&prof_lock);
	return found;
}

/* reset_profile zeroes every slot's counts (marker 47); the slots keep
 * their addresses. */
void reset_profile(void) {
	if (prof)
		for (uint32_t i = 0; i < PROF_SLOTS; i++)
			for (int j = 0; j < P_ALL; j++)
				__atomic_store_n(&prof[i].n[j], 0, __ATOMIC_RELAXED);
}

/* write_columns writes every slot that counted something in columns
 * [from, to) of the profile to fd, under the header line head:
 *   HEAD
 *   ADDR N...   (hex address, decimal counts)
 *   end
 * replacing the file's previous contents. */
static void write_columns(int fd, const char *head, int from, int to) {
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		return;
	len += snprintf(buf, cap, "%s\n", head);
	for (uint32_t i = 0; i < PROF_SLOTS; i++) {
		uint64_t n[P_ALL], any = 0;
		for (int j = from; j < to; j++)
			any |= n[j] = __atomic_load_n(&prof[i].n[j], __ATOMIC_RELAXED);
		if (!any)
			continue;
		if (cap - len < 128) {
			char *b = realloc(buf, cap * 2);
			if (!b) {
				free(buf);
				return;
			}
			buf = b;
			cap *= 2;
		}
		len += snprintf(buf + len, cap - len, "%llx", (unsigned long long)prof[i].addr);
		for (int j = from; j < to; j++)
			len += snprintf(buf + len, cap - len, " %llu", (unsigned long long)n[j]);
		len += snprintf(buf + len, cap - len, "\n");
	}
	len += snprintf(buf + len, cap - len, "end\n");
	if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, len, 0) != (ssize_t)len)
		fprintf(stderr, "rxevm insns plugin: writing the profile failed\n");
	free(buf);
}

/* write_profile writes the profile: user, kernel, kernel-wait and
 * kernel-other per address to profile=FILE
 * (rxevm-insns-profile 1 windows W), and kernel-work, kernel-time and
 * kernel-others to FILE-kernel (rxevm-insns-kernel-profile 1 windows W),
 * a file of its own so that readers of the first need no change. */
static void write_profile(uint64_t w) {
	char head[128];
	snprintf(head, sizeof head, "rxevm-insns-profile 1 windows %llu", (unsigned long long)w);
	write_columns(pfd, head, 0, P_N);
	if (pkfd >= 0) {
		snprintf(head, sizeof head, "rxevm-insns-kernel-profile 1 windows %llu", (unsigned long long)w);
		write_columns(pkfd, head, P_KWORK, P_ALL);
	}
}

/* report writes the counts (marker 48, and once at install) and the
 * profile. */
void report(void) {
	uint64_t u = 0, k = 0, kw = 0, ko = 0, wk = 0, tm = 0, ot = 0;
	for (int i = 0; i < MAXCPU; i++) {
		wk += __atomic_load_n(&cpus[i].kwork, __ATOMIC_RELAXED);
		tm += __atomic_load_n(&cpus[i].ktime, __ATOMIC_RELAXED);
		ot += __atomic_load_n(&cpus[i].kothers, __ATOMIC_RELAXED);
		u += __atomic_load_n(&cpus[i].user, __ATOMIC_RELAXED);
		k += __atomic_load_n(&cpus[i].kernel, __ATOMIC_RELAXED);
		kw += __atomic_load_n(&cpus[i].kwait, __ATOMIC_RELAXED);
		ko += __atomic_load_n(&cpus[i].kother, __ATOMIC_RELAXED);
	}
	char buf[512];
	/* Fixed width: each report overwrites the last one whole. The second
	 * line is new in this version: readers of the first alone ignore it. */
	int n = snprintf(buf, sizeof buf,
		"rxevm-insns 1 user %20llu kernel %20llu kernel-wait %20llu kernel-other %20llu windows %20llu\n"
		"rxevm-insns-kernel 1 work %20llu time %20llu others %20llu roles %5d\n",
		(unsigned long long)u, (unsigned long long)k, (unsigned long long)kw, (unsigned long long)ko,
		(unsigned long long)__atomic_load_n(&windows, __ATOMIC_RELAXED),
		(unsigned long long)wk, (unsigned long long)tm, (unsigned long long)ot,
		roles_now ? roles_now->n : 0);
	if (pwrite(fd, buf, n, 0) != n)
		fprintf(stderr, "rxevm insns plugin: writing the counts failed\n");
	if (prof)
		write_profile(__atomic_load_n(&windows, __ATOMIC_RELAXED));
}
