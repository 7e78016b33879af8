// cloop: our one-sided loops (internal/loops: rb_read_ping,
// rb_atomic_ping) run from a C-only process, with no Go runtime in it, set
// up as rdmalat sets up a loopback pair: two device contexts on one
// device, RC queue pairs with one send work request and a one-entry send
// CQ, an mmap'ed buffer of two cache lines per side, outstanding reads as
// the device allows, a GRH with hop limit 64, and the initiator's thread
// pinned. It is the third arm beside perftest and the benchmark: if it
// sits with perftest, the one-sided tail gap is the Go process; if it
// sits with ours, it is our loop's code.
//
//   cloop -d rxe0 -x 1 -o read|atomic -n 5000 -c 2 -w 1 [-t 0] [-b 0] [-T] DIR
//
// -t N (added 2026-12-04) starts N more threads that sleep in pause()
// through the run, so that the process is multi-threaded as a Go process
// is: a multi-threaded process's system calls on a file descriptor take
// and drop a reference to the file (two atomic operations) that a
// single-threaded one skips, and rxe rings its doorbell with write().
// -b MS (added 2026-12-04) keeps three unpinned threads spinning for MS
// milliseconds just before the loop, as a Go test binary's start keeps
// the other CPUs busy (docs/compare/2026-12-04-levels). -T (added
// 2026-12-04) runs the loop on a thread of its own, as the benchmark
// does, instead of the main thread.
//
// writes DIR/samples.txt, one sample (ns) a line, as RDMABENCH_SAMPLES_DIR
// does. -P K (added 2026-12-04, docs/compare/2026-12-04-insns) reads
// the file $CLOOP_PRIME (8 MiB in a RAM file system) K times just before
// the loop, each time followed by a child process that exits at once: the
// read fills QEMU's software TLB with kernel pages, the switch to the child
// and back flushes it, and at a flush QEMU doubles a table that was more
// than 70% used. -w is the unmeasured lead-in call's length (the benchmark's b.N=1
// run before its measured one).
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "loops.h"

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	uint32_t psn;
};

static void die(const char *what, int err) {
	fprintf(stderr, "cloop: %s: %s\n", what, strerror(err));
	exit(1);
}

enum { CACHE_LINE = 64, HALF = CACHE_LINE, TOTAL = 2 * HALF };

static void *sleeper(void *arg) {
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int measuring_cpu;

// spinner busy-loops until *arg on any CPU but the measuring one.
static void *spinner(void *arg) {
	int64_t until = *(int64_t *)arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (c != measuring_cpu)
			CPU_SET(c, &set);
	sched_setaffinity(0, sizeof set, &set);
	while (rb_now() < until)
		;
	return NULL;
}

// A run of the loop: lead round trips, then n measured.
struct run {
	rb_loop *l;
	int64_t *rtt;
	int n, lead, atomic, rc;
};

static void *run_loop(void *arg) {
	struct run *r = arg;
	r->rc = RB_OK;
	if (r->lead > 0)
		r->rc = r->atomic ? rb_atomic_ping(r->l, r->rtt, r->lead < r->n ? r->lead : r->n)
				  : rb_read_ping(r->l, r->rtt, r->lead < r->n ? r->lead : r->n);
	if (r->rc == RB_OK)
		r->rc = r->atomic ? rb_atomic_ping(r->l, r->rtt, r->n) : rb_read_ping(r->l, r->rtt, r->n);
	return NULL;
}

static uint8_t clamp(int n) { return n < 1 ? 1 : n > 255 ? 255 : (uint8_t)n; }

static void open_side(struct side *s, struct ibv_device *dev, int gidx, int access) {
	if (!(s->ctx = ibv_open_device(dev)))
		die("ibv_open_device", errno);
	if (ibv_query_gid(s->ctx, 1, gidx, &s->gid))
		die("ibv_query_gid", errno);
	if (!(s->pd = ibv_alloc_pd(s->ctx)))
		die("ibv_alloc_pd", errno);
	if (!(s->cq = ibv_create_cq(s->ctx, 1, NULL, NULL, 0)))
		die("ibv_create_cq", errno);
	s->buf = mmap(NULL, TOTAL, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->buf == MAP_FAILED)
		die("mmap", errno);
	if (!(s->mr = ibv_reg_mr(s->pd, s->buf, TOTAL, IBV_ACCESS_LOCAL_WRITE | access)))
		die("ibv_reg_mr", errno);
	struct ibv_qp_init_attr qa = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
	};
	if (!(s->qp = ibv_create_qp(s->pd, &qa)))
		die("ibv_create_qp", errno);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access};
	int rc = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (rc)
		die("INIT", rc);
	s->psn = (uint32_t)random() & 0xffffff;
}

static void connect_side(struct side *s, const struct side *r, int gidx) {
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	if (ibv_query_device(s->ctx, &da) || ibv_query_port(s->ctx, 1, &pa))
		die("query", errno);
	uint8_t accept = clamp(da.max_qp_rd_atom), initiate = clamp(da.max_qp_init_rd_atom);
	if (initiate > accept)
		initiate = accept;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = pa.active_mtu, .dest_qp_num = r->qp->qp_num,
		.rq_psn = r->psn, .max_dest_rd_atomic = accept, .min_rnr_timer = 12,
		.ah_attr = {.is_global = 1, .port_num = 1,
			.grh = {.dgid = r->gid, .sgid_index = gidx, .hop_limit = 64}},
	};
	int rc = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (rc)
		die("RTR", rc);
	struct ibv_qp_attr t = {.qp_state = IBV_QPS_RTS, .sq_psn = s->psn, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .max_rd_atomic = initiate};
	rc = ibv_modify_qp(s->qp, &t, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	if (rc)
		die("RTS", rc);
}

int main(int argc, char **argv) {
	const char *devname = "rxe0", *op = "read";
	int gidx = 1, n = 5000, cpu = 2, lead = 1, threads = 0, burst = 0, on_thread = 0, prime = 0, c;
	while ((c = getopt(argc, argv, "d:x:o:n:c:w:t:b:TP:")) != -1) {
		switch (c) {
		case 'd': devname = optarg; break;
		case 'x': gidx = atoi(optarg); break;
		case 'o': op = optarg; break;
		case 'n': n = atoi(optarg); break;
		case 'c': cpu = atoi(optarg); break;
		case 'w': lead = atoi(optarg); break;
		case 't': threads = atoi(optarg); break;
		case 'b': burst = atoi(optarg); break;
		case 'T': on_thread = 1; break;
		case 'P': prime = atoi(optarg); break;
		default: goto usage;
		}
	}
	int atomic = strcmp(op, "atomic") == 0;
	if (optind != argc - 1 || n < 1 || (!atomic && strcmp(op, "read") != 0)) {
	usage:
		fprintf(stderr, "usage: cloop [-d rxe0] [-x 1] [-o read|atomic] [-n 5000] [-c 2] [-w 1] [-t 0] [-b 0] [-T] [-P 0] DIR\n");
		return 2;
	}
	const char *dir = argv[optind];
	srandom((unsigned)rb_now());
	int num;
	struct ibv_device **list = ibv_get_device_list(&num), *dev = NULL;
	for (int i = 0; list && i < num; i++)
		if (strcmp(ibv_get_device_name(list[i]), devname) == 0)
			dev = list[i];
	if (!dev) {
		fprintf(stderr, "cloop: no device %s (ls /sys/class/infiniband)\n", devname);
		return 1;
	}
	int access = atomic ? IBV_ACCESS_REMOTE_ATOMIC : IBV_ACCESS_REMOTE_READ;
	struct side ini, rsp;
	open_side(&ini, dev, gidx, access);
	open_side(&rsp, dev, gidx, access);
	connect_side(&ini, &rsp, gidx);
	connect_side(&rsp, &ini, gidx);

	rb_params p = {
		.qp = ini.qp, .scq = ini.cq, .op = atomic ? RB_OP_FETCH_ADD : RB_OP_READ,
		.base = ini.buf, .lkey = ini.mr->lkey, .send_off = 0, .recv_off = HALF,
		.size = atomic ? 8 : 2, .raddr = (uintptr_t)rsp.buf + HALF, .rkey = rsp.mr->rkey,
		.idle_ns = 10 * 1000000000LL,
	};
	rb_loop *l = calloc(1, sizeof *l);
	rb_setup(l, &p);
	int rc0;

	for (int i = 0; i < threads; i++) {
		pthread_t t;
		if ((rc0 = pthread_create(&t, NULL, sleeper, NULL)))
			die("pthread_create", rc0);
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set))
		die("sched_setaffinity", errno);
	int64_t *rtt = calloc((size_t)n, sizeof *rtt);
	memset(rtt, 0, (size_t)n * sizeof *rtt); // touch every page before the loop
	if (burst > 0) {
		measuring_cpu = cpu;
		int64_t until = rb_now() + (int64_t)burst * 1000000;
		pthread_t sp[3];
		for (int i = 0; i < 3; i++)
			if ((rc0 = pthread_create(&sp[i], NULL, spinner, &until)))
				die("pthread_create", rc0);
		for (int i = 0; i < 3; i++)
			pthread_join(sp[i], NULL);
	}
	if (prime > 0) {
		const char *path = getenv("CLOOP_PRIME");
		size_t len = 8 << 20;
		char *b = malloc(len);
		for (int k = 0; k < prime; k++) {
			int fd = open(path ? path : "/tmp/cloop-prime", O_RDONLY);
			if (fd < 0)
				die("open $CLOOP_PRIME", errno);
			while (read(fd, b, len) > 0)
				;
			close(fd);
			pid_t pid = fork();
			if (pid == 0)
				_exit(0);
			if (pid < 0)
				die("fork", errno);
			waitpid(pid, NULL, 0);
		}
		free(b);
	}
	struct run r = {.l = l, .rtt = rtt, .n = n, .lead = lead, .atomic = atomic};
	if (on_thread) { // the thread inherits this one's CPU
		pthread_t t;
		if ((rc0 = pthread_create(&t, NULL, run_loop, &r)))
			die("pthread_create", rc0);
		pthread_join(t, NULL);
	} else {
		run_loop(&r);
	}
	int rc = r.rc;
	if (rc != RB_OK) {
		fprintf(stderr, "cloop: loop ended with code %d (err %d, got %llu, want %llu)\n", rc, l->err,
			(unsigned long long)l->got, (unsigned long long)l->want);
		return 1;
	}
	mkdir(dir, 0755);
	char path[4096];
	snprintf(path, sizeof path, "%s/samples.txt", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		die(path, errno);
	for (int i = 0; i < n; i++)
		fprintf(f, "%lld\n", (long long)rtt[i]);
	fclose(f);
	ibv_destroy_qp(ini.qp);
	ibv_destroy_qp(rsp.qp);
	ibv_dereg_mr(ini.mr);
	ibv_dereg_mr(rsp.mr);
	ibv_destroy_cq(ini.cq);
	ibv_destroy_cq(rsp.cq);
	ibv_dealloc_pd(ini.pd);
	ibv_dealloc_pd(rsp.pd);
	ibv_close_device(ini.ctx);
	ibv_close_device(rsp.ctx);
	ibv_free_device_list(list);
	return 0;
}
