// The measured loops of every operation, shared declarations and the
// helpers each loop inlines. The loops are C so that nothing of the Go
// runtime (preemption signals, stack checks, scheduler hand-offs) runs
// inside a sample; shared/FACTS.md has the measurements that chose this.
// Go calls a loop once per chunk of samples and records them after it
// returns.
#ifndef RB_LOOPS_H
#define RB_LOOPS_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

enum {
	RB_OK = 0,
	RB_STOPPED,      // the stop flag was raised
	RB_TIMEOUT_CQ,   // no send completion within idle_ns
	RB_TIMEOUT_PEER, // the peer did not answer within idle_ns
	RB_POST,         // ibv_post_send failed: err
	RB_POLL,         // ibv_poll_cq failed: err
	RB_WC,           // a completion with an error status: err (status), got (opcode, undefined by libibverbs here), vendor_err, wc_recv
	RB_ORDER,        // the peer's counter was not the expected one: got, want
	RB_POST_RECV,    // ibv_post_recv failed: err
	RB_EVENT,        // waiting for a completion event failed: err (errno), got (step)
	RB_NO_IMM,       // a receive completion without immediate data
	RB_SOURCE,       // a UD message from another QP: got, want
	RB_ATOMIC,       // an atomic returned an old value that is not the expected one: got, want
	RB_NO_LOOP,      // this side runs no loop for the operation
	RB_PARK_READ,    // reading park_fd failed: err (errno)
};

// Stop levels. RB_STOP_PARK blocks a responder at its next wait for the
// peer until Go lowers the flag and writes park_fd (turn-taking: between
// turns the thread sleeps in read(2) instead of spinning). RB_STOP_FINISH
// ends a loop at its next wait for the peer, so that an answer already
// posted completes and is counted (a responder told to stop once the
// initiator has seen its last answer, which lands before the responder
// polls its completion). RB_STOP_NOW also ends a wait for a send
// completion. Waits for the peer end at RB_STOP_PARK and above.
enum { RB_STOP_PARK = 1, RB_STOP_FINISH = 2, RB_STOP_NOW = 3 };

// Steps of an event wait, reported in got with RB_EVENT.
enum { RB_EV_GET = 1, RB_EV_POLL, RB_EV_NOTIFY, RB_EV_SETUP };

typedef struct rb_loop {
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;              // send and receive CQs (may be one)
	struct ibv_comp_channel *sch, *rch;    // their channels when events is set
	int32_t events;                        // wait on channels instead of polling CQs
	int32_t imm;                           // receives carry the counter as immediate data
	struct ibv_sge sge;                    // what is sent, written, read into, or where an atomic's old value lands
	struct ibv_send_wr wr;
	struct ibv_sge rsge;                   // where a receive lands (GRH first on UD)
	struct ibv_recv_wr rwr;                // the one receive, reposted after each completion
	volatile uint8_t *poll;                // write: the byte the peer's write lands in
	volatile uint8_t *rlast;               // send: the last payload byte of a receive
	uint8_t *post;                         // the last byte sent or written
	volatile uint64_t *old;                // atomics: where the old value lands
	uint64_t cnt;                          // last counter sent (initiator) or answered (responder); atomics: the remote word's value
	uint32_t src_qpn;                      // UD: every receive must come from this QP
	int32_t atomic_synced;                 // atomics: cnt and be hold the remote word's state
	int32_t be;                            // atomics: the device returns old values big-endian
	int32_t posted;                        // receives outstanding on the QP
	int32_t rx_depth;                      // receives kept posted
	int32_t repost_below;                  // 0: repost after each receive; else repost only while fewer are posted
	int32_t stop;                          // raised by Go (atomically): RB_STOP_PARK, RB_STOP_FINISH or RB_STOP_NOW
	int32_t parked;                        // 1 while a responder sleeps in rb_park
	int32_t park_fd;                       // eventfd a parked responder reads; -1: none
	int64_t idle_ns;                       // longest wait for the peer or a completion
	uint32_t extra;                        // known extra work per operation (rb_extra_work): tests of the work metrics
	int64_t gap_ns;                        // initiator: idle time before each round trip (rb_gap); 0: none
	int32_t err;
	uint64_t got, want;
	uint32_t vendor_err;                   // RB_WC: the completion's vendor_err (the provider's own code)
	int32_t wc_recv;                       // RB_WC: 1 when it completed a receive, 0 this side's post
	int32_t wake_tid;                      // events: the thread in the loop, which Go signals on a stop; 0: none
	timer_t wake_timer;                    // events: that thread's tick (events.c)
} rb_loop;

// Markers for rxevm's instruction counter (internal/vm/insns/plugin/insns.c):
// 7-byte NOPs no compiler emits, one instruction each on hardware. A window
// (open, close) holds a loop's operations; a wait on the peer or a
// completion marks each poll (try) and its success (got), so that the
// user instructions of the polls that found nothing are left out.
// RB_NO_MARKERS (a CGO_CFLAGS define) builds the loops without them.
#if defined(__x86_64__) && !defined(RB_NO_MARKERS)
#define RB_MARK(x) __asm__ volatile("nopl 0x52444d" #x "(%rax)")
#else
#define RB_MARK(x) ((void)0)
#endif
#define RB_MARK_OPEN() RB_MARK(42)
#define RB_MARK_CLOSE() RB_MARK(43)
#define RB_MARK_TRY() RB_MARK(45)
#define RB_MARK_GOT() RB_MARK(46)

// rb_extra_work executes about 2 * l->extra more instructions (a counted
// loop of dec and jnz): the known extra work per operation that the tests
// of the work metrics must find. l->extra is 0 unless a test sets it, or a
// build defines RB_EXTRA_INSNS (through CGO_CFLAGS) for an A/B.
static inline void rb_extra_work(const rb_loop *l) {
	uint32_t k = l->extra;
#if defined(__x86_64__)
	if (k)
		__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(k));
#else
	for (volatile uint32_t i = 0; i < k; i++)
		;
#endif
}

static inline int64_t rb_now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// rb_gap idles l->gap_ns from t, the end of the last round trip, and
// returns the time it ended: the next sample starts there, so the idle is
// left out of the latency (perftest --latency_gap spins the same way but
// keeps the gap inside its samples). A busy spin on the clock, as
// perftest's: the CPU stays awake; what the gap shows is the device, the
// caches and the peer after an idle.
static inline int64_t rb_gap(const rb_loop *l, int64_t t) {
	if (l->gap_ns <= 0)
		return t;
	int64_t end = t + l->gap_ns, now;
	RB_MARK_TRY(); // the gap is a wait: the counter drops its spin's user work
	while ((now = rb_now()) < end)
		;
	RB_MARK_TRY(); // drop what the spin held, then count on
	RB_MARK_GOT();
	return now;
}

// rb_check is called every 1024 spins (or when an event wait is
// interrupted): it ends a
// wait that has lasted past the deadline or that Go asked to stop (at
// level or above). The clock is read only here, never per spin.
static inline int rb_check(rb_loop *l, int64_t *deadline, int timeout_code, int32_t level) {
	if (__atomic_load_n(&l->stop, __ATOMIC_RELAXED) >= level)
		return RB_STOPPED;
	int64_t now = rb_now();
	if (*deadline == 0)
		*deadline = now + l->idle_ns;
	else if (now > *deadline)
		return timeout_code;
	return RB_OK;
}

// rb_wait_event waits for the next completion event on ch, as perftest -e
// does per iteration: ibv_get_cq_event (one blocking read), then
// ibv_ack_cq_events(1), ibv_req_notify_cq. The read ends early with EINTR
// on the loop thread's tick or Go's stop signal (events.c): then the stop
// flag and the deadline are looked at, and it blocks again.
static inline int rb_wait_event(rb_loop *l, struct ibv_comp_channel *ch, int64_t *deadline, int timeout_code, int32_t level) {
	for (;;) {
		if (__atomic_load_n(&l->stop, __ATOMIC_RELAXED) >= level)
			return RB_STOPPED;
		struct ibv_cq *ev_cq;
		void *ev_ctx;
		if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0) {
			ibv_ack_cq_events(ev_cq, 1);
			int rc = ibv_req_notify_cq(ev_cq, 0);
			if (rc) {
				l->err = rc;
				l->got = RB_EV_NOTIFY;
				return RB_EVENT;
			}
			return RB_OK;
		}
		if (errno != EINTR) {
			l->err = errno;
			l->got = RB_EV_GET;
			return RB_EVENT;
		}
		int rc;
		if ((rc = rb_check(l, deadline, timeout_code, level)))
			return rc;
	}
}

// rb_wait_wc waits for one completion on cq: busy-polling, or with events
// one wait on ch, then one poll, again while the poll finds nothing (an
// event left over from a completion already taken).
static inline int rb_wait_wc(rb_loop *l, struct ibv_cq *cq, struct ibv_comp_channel *ch,
		struct ibv_wc *wc, int timeout_code, int32_t level) {
	int64_t deadline = 0;
	uint32_t spins = 0;
	int n, rc;
	for (;;) {
		RB_MARK_TRY();
		if (l->events && (rc = rb_wait_event(l, ch, &deadline, timeout_code, level)))
			return rc;
		if ((n = ibv_poll_cq(cq, 1, wc)) != 0)
			break;
		if (!l->events && (++spins & 1023) == 0 && (rc = rb_check(l, &deadline, timeout_code, level)))
			return rc;
	}
	RB_MARK_GOT();
	if (n < 0) {
		l->err = n;
		return RB_POLL;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		l->err = wc->status;
		l->got = wc->opcode;
		l->vendor_err = wc->vendor_err;
		l->wc_recv = timeout_code == RB_TIMEOUT_PEER; // a wait on the peer is on the receive CQ
		return RB_WC;
	}
	return RB_OK;
}

// rb_park is where a responder's loop goes when a wait for the peer ended
// on the stop flag: parked (RB_STOP_PARK), it sleeps in read(2) on park_fd
// until Go wakes it, then returns RB_OK to wait again, or RB_STOPPED when
// the flag says to end. No round trip is in flight while it sleeps: Go
// parks the responder only after the initiator saw its last answer.
static inline int rb_park(rb_loop *l) {
	for (;;) {
		int32_t s = __atomic_load_n(&l->stop, __ATOMIC_ACQUIRE);
		if (s == 0)
			return RB_OK;
		if (s != RB_STOP_PARK || l->park_fd < 0)
			return RB_STOPPED;
		__atomic_store_n(&l->parked, 1, __ATOMIC_RELEASE);
		uint64_t v;
		ssize_t n = read(l->park_fd, &v, sizeof v);
		__atomic_store_n(&l->parked, 0, __ATOMIC_RELEASE);
		if (n < 0 && errno != EINTR) {
			l->err = errno;
			return RB_PARK_READ;
		}
	}
}

// rb_post posts the loop's send work request and waits for its
// completion: every operation of every loop is signaled, one in flight.
static inline int rb_post(rb_loop *l) {
	struct ibv_send_wr *bad;
	int rc = ibv_post_send(l->qp, &l->wr, &bad);
	if (rc) {
		l->err = rc;
		return RB_POST;
	}
	struct ibv_wc wc;
	return rb_wait_wc(l, l->scq, l->sch, &wc, RB_TIMEOUT_CQ, RB_STOP_NOW);
}

// rb_repost posts the loop's receive work request once more.
static inline int rb_repost(rb_loop *l) {
	struct ibv_recv_wr *bad;
	int rc = ibv_post_recv(l->qp, &l->rwr, &bad);
	if (rc) {
		l->err = rc;
		return RB_POST_RECV;
	}
	l->posted++;
	return RB_OK;
}

// rb_take_recv waits for the peer's next message, checks that it carries
// the counter want (as immediate data, or in its last payload byte) and,
// on UD, that it came from the peer's QP; then reposts the receive, as
// perftest does right after each receive completion on RC. On UD and UC
// perftest pre-posts a receive for every iteration (up to 16000) and
// reposts none: with repost_below set the loop does the same until fewer
// than repost_below are left, then reposts one per receive again (a
// loop longer than the pre-posted receives; the next loop tops them up).
static inline int rb_take_recv(rb_loop *l, uint32_t want) {
	struct ibv_wc wc;
	int rc = rb_wait_wc(l, l->rcq, l->rch, &wc, RB_TIMEOUT_PEER, RB_STOP_PARK);
	if (rc)
		return rc;
	l->posted--;
	if (l->imm) {
		if (!(wc.wc_flags & IBV_WC_WITH_IMM)) {
			l->got = wc.opcode;
			return RB_NO_IMM;
		}
		if (ntohl(wc.imm_data) != want) {
			l->got = ntohl(wc.imm_data);
			l->want = want;
			return RB_ORDER;
		}
	} else if (*l->rlast != (uint8_t)want) {
		l->got = *l->rlast;
		l->want = (uint8_t)want;
		return RB_ORDER;
	}
	if (l->src_qpn && wc.src_qp != l->src_qpn) {
		l->got = wc.src_qp;
		l->want = l->src_qpn;
		return RB_SOURCE;
	}
	if (l->posted >= l->repost_below && l->repost_below)
		return RB_OK;
	return rb_repost(l);
}

// rb_send_next sends counter c to the peer (in the last byte, and as
// immediate data where the operation has one) and waits for the send
// completion.
static inline int rb_send_next(rb_loop *l, uint32_t c) {
	*l->post = (uint8_t)c;
	if (l->imm)
		l->wr.imm_data = htonl(c);
	return rb_post(l);
}

// Loops, one per operation family. A ping runs n samples as the initiator;
// rtt[i] is the time from one post to the next, like perftest's
// tposted[i+1] - tposted[i], one clock read per sample. A pong answers
// until stopped or until max round trips (0: no limit).
int rb_write_ping(rb_loop *l, int64_t *rtt, int n);
int rb_write_pong(rb_loop *l, uint64_t max, uint64_t *done);
int rb_recv_ping(rb_loop *l, int64_t *rtt, int n);
int rb_recv_pong(rb_loop *l, uint64_t max, uint64_t *done);
int rb_read_ping(rb_loop *l, int64_t *rtt, int n);
int rb_atomic_ping(rb_loop *l, int64_t *rtt, int n);

// Operations: the values of spec.Op, which are frozen.
enum { RB_OP_WRITE = 1, RB_OP_READ, RB_OP_SEND, RB_OP_WRITE_IMM, RB_OP_FETCH_ADD, RB_OP_COMPARE_SWAP, RB_OP_SEND_IMM };

// rb_params is what Go knows of one side, in plain fields (cgo cannot
// reach into the unions of struct ibv_send_wr).
typedef struct {
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	struct ibv_comp_channel *sch, *rch;
	int32_t op, events, ud, inl;
	uint8_t *base;          // the registered buffer
	uint32_t lkey;
	uint32_t send_off, recv_off, recv_len, size;
	uint64_t raddr;
	uint32_t rkey;
	struct ibv_ah *ah;      // UD
	uint32_t rqpn, qkey;    // UD
	int32_t rx_depth, posted, repost_below;
	int64_t idle_ns;
	int64_t gap_ns;         // initiator: idle before each round trip
} rb_params;

// Setup, outside any measurement (setup.c).
void rb_setup(rb_loop *l, const rb_params *p);
int rb_fill_recv(rb_loop *l);
int rb_arm(rb_loop *l);
int64_t rb_clock_cost(int n);

// Events mode's blocking waits (events.c), around every loop call.
int rb_events_begin(rb_loop *l);
void rb_events_end(rb_loop *l);
int rb_wake_signal(void);

#endif
