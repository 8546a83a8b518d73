// SPDX-License-Identifier: MIT
/*
 * truthload's per-thread mechanisms. Each runs on the calling thread (a
 * front inside its request, or a worker), on objects of that thread
 * only: its io_uring ring, pipes and socketpair, its raw pty pair (whose
 * slave its own pty_reader thread reads), its timerfd. So every
 * completion and wake it records is identified by the thread's own
 * state, never guessed.
 *
 * timer: a nanosleep of --sleep-us (hrtimer_wakeup, armed and fired for
 * the sleeper), then a one-shot timerfd of --sleep-us read until it fires
 * (timerfd_tmrproc; a hop only when the read slept: its voluntary
 * context switches grew, else the timer fired before the read and woke
 * nobody).
 *
 * io_uring, per request:
 *  (a) --queue-depth N pipe reads, each submitted alone (it cannot
 *      complete: the pipe is empty, so the kernel arms a poll), with
 *      user_data drawn from a pool of --reuse values; then N file reads
 *      (a memfd, completed inline) with the SAME user_data values, one
 *      submit each: the same user_data is in flight twice, and the file
 *      reads complete first. Then each pipe is written, and its read
 *      completes. A CQE is known by its user_data and its length: pipe
 *      read k returns k+1 bytes, file read k returns 64+k bytes.
 *  (b) a multishot RECV (IORING_RECV_MULTISHOT, provided buffers from a
 *      registered buffer ring) on a socketpair, armed once per request;
 *      the request sends it MS_MSGS messages whose bytes name it, and
 *      reaps one CQE (IORING_CQE_F_MORE) for each, then cancels it
 *      (IORING_OP_ASYNC_CANCEL) and reaps its last CQE: each CQE is a hop
 *      from the arming submit to that completion.
 *  (c) a linked pair, WRITE (IOSQE_IO_LINK) then READ, on a pipe, in one
 *      submit: a hop for the linked READ.
 * --affine runs (a) only.
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <termios.h>
#include <fcntl.h>
#include "truthload.h"

#define RING_ENTRIES 64
#define UD_BASE 0x1000ull     /* the user_data pool: UD_BASE .. UD_BASE + reuse - 1 */
#define MS_UD 0x6d7300ull     /* the multishot recv */
#define MSC_UD 0x6d7363ull    /* its cancel */
#define MS_MSGS 2             /* messages per request */
#define LINKW_UD 0x6c6b00ull  /* the linked pair's write */
#define MS_NBUF 8
#define MS_BUFSZ 256
#define MS_BGID 7
#define FILE_LEN (64 + MAX_QDEPTH)

static int data_fd;

static void ptyreader_start(struct tctx *t);
static void ptyreader_stop(struct tctx *t);

void mech_global_init(void)
{
	char data[FILE_LEN];

	for (int i = 0; i < FILE_LEN; i++)
		data[i] = (char)('a' + i % 26);
	data_fd = memfd_create("truthload-data", MFD_CLOEXEC);
	if (data_fd < 0)
		die("memfd_create", errno);
	if (write(data_fd, data, sizeof(data)) != (ssize_t)sizeof(data))
		die("write memfd", errno);
}

/* A pty pair whose slave is raw (tests/workloads/ptyraw.h): every write
 * to the master is one queueing of the slave port's flush_to_ldisc work,
 * and nothing comes back to the master. */
static void open_raw_pty(int *master, int *slave)
{
	struct termios tio;

	*master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*master < 0 || grantpt(*master) || unlockpt(*master))
		die("posix_openpt", errno);
	*slave = open(ptsname(*master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*slave < 0)
		die("open pty slave", errno);
	if (tcgetattr(*slave, &tio))
		die("tcgetattr", errno);
	cfmakeraw(&tio);
	tio.c_cc[VMIN] = 1;
	tio.c_cc[VTIME] = 0;
	if (tcsetattr(*slave, TCSANOW, &tio))
		die("tcsetattr", errno);
}

void ctx_io_init(struct tctx *t)
{
	struct io_uring_buf_reg reg;
	int ret;

	if ((ret = io_uring_queue_init(RING_ENTRIES, &t->ring, 0)))
		die("io_uring_queue_init", ret);
	for (int k = 0; k < MAX_QDEPTH && k < opt.qdepth; k++)
		if (pipe2(t->pipes[k], O_CLOEXEC))
			die("pipe", errno);
	if (pipe2(t->linkp, O_CLOEXEC))
		die("pipe", errno);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, t->sv))
		die("socketpair", errno);
	t->br = mmap(NULL, MS_NBUF * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE,
		     MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	t->msbufs = malloc(MS_NBUF * MS_BUFSZ);
	if (t->br == MAP_FAILED || !t->msbufs)
		die("buffer ring memory", ENOMEM);
	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = (unsigned long)t->br;
	reg.ring_entries = MS_NBUF;
	reg.bgid = MS_BGID;
	if ((ret = io_uring_register_buf_ring(&t->ring, &reg, 0)))
		die("io_uring_register_buf_ring", ret);
	io_uring_buf_ring_init(t->br);
	for (int i = 0; i < MS_NBUF; i++)
		io_uring_buf_ring_add(t->br, t->msbufs + i * MS_BUFSZ, MS_BUFSZ, (unsigned short)i,
				      io_uring_buf_ring_mask(MS_NBUF), i);
	io_uring_buf_ring_advance(t->br, MS_NBUF);
	t->ud_used = calloc((size_t)opt.reuse, 1);
	if (!t->ud_used)
		die("calloc", ENOMEM);
	if (chain_has(EL_WQ))
		ptyreader_start(t);
	t->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (t->tfd < 0)
		die("timerfd_create", errno);
	t->has_io = 1;
}

void ctx_io_exit(struct tctx *t)
{
	if (!t->has_io)
		return;
	io_uring_queue_exit(&t->ring); /* cancels the armed multishot recv */
	for (int k = 0; k < opt.qdepth; k++) {
		close(t->pipes[k][0]);
		close(t->pipes[k][1]);
	}
	close(t->linkp[0]);
	close(t->linkp[1]);
	close(t->sv[0]);
	close(t->sv[1]);
	munmap(t->br, MS_NBUF * sizeof(struct io_uring_buf));
	free(t->msbufs);
	free(t->ud_used);
	if (t->pr)
		ptyreader_stop(t);
	close(t->tfd);
	t->has_io = 0;
}

/* ---- sync ------------------------------------------------------------------------ */
/*
 * --flat: the burn goes through FLAT_MAX functions of equal work (100
 * steps of one dependent multiply-add chain, about 100 ns), called in
 * turn, so that the true profile is flat: no function holds more than
 * 1/--flat of the CPU. A sampler that favours some (skid, a tick that
 * lands at calls more than between them) shows it as spread between
 * functions that should be equal. noinline, and the constant differs,
 * so that each stays a function of its own.
 */
#define FLAT_FN(n)                                                              \
	static __attribute__((noinline)) uint64_t flat_##n(uint64_t x)          \
	{                                                                       \
		for (int i = 0; i < 100; i++)                                   \
			x = x * 6364136223846793005u + (2 * n + 1);             \
		return x;                                                       \
	}
#define FLAT_FN8(a)                                                                        \
	FLAT_FN(a##0) FLAT_FN(a##1) FLAT_FN(a##2) FLAT_FN(a##3) FLAT_FN(a##4) FLAT_FN(a##5) \
	FLAT_FN(a##6) FLAT_FN(a##7)
FLAT_FN8(1) FLAT_FN8(2) FLAT_FN8(3) FLAT_FN8(4) FLAT_FN8(5) FLAT_FN8(6) FLAT_FN8(7) FLAT_FN8(8)
#define FLAT_REF8(a) flat_##a##0, flat_##a##1, flat_##a##2, flat_##a##3, flat_##a##4, \
	flat_##a##5, flat_##a##6, flat_##a##7
static uint64_t (*const flat_fns[FLAT_MAX])(uint64_t) = {
	FLAT_REF8(1), FLAT_REF8(2), FLAT_REF8(3), FLAT_REF8(4),
	FLAT_REF8(5), FLAT_REF8(6), FLAT_REF8(7), FLAT_REF8(8),
};

void burn_us(long us)
{
	uint64_t end;
	volatile uint64_t x = 1;
	static _Thread_local unsigned next;

	if (us <= 0)
		return;
	end = cpu_ns() + (uint64_t)us * 1000u;
	do
		if (opt.flat)
			for (int i = 0; i < 20; i++)
				x = flat_fns[next++ % opt.flat](x);
		else
			for (int i = 0; i < 2000; i++)
				x = x * 6364136223846793005u + 1442695040888963407u;
	while (cpu_ns() < end);
}

void el_sync(struct tctx *t, uint64_t rid)
{
	(void)t;
	(void)rid;
	burn_us(opt.work_us);
}

/* ---- io_uring ---------------------------------------------------------------------- */
static struct io_uring_sqe *sqe_(struct tctx *t)
{
	struct io_uring_sqe *s = io_uring_get_sqe(&t->ring);

	if (!s)
		die("io_uring_get_sqe", EBUSY);
	return s;
}

/* Submit what is queued (@n SQEs), between two clock readings. */
static void submit_(struct tctx *t, int n, uint64_t *a0, uint64_t *a1)
{
	int ret;

	*a0 = now_ns();
	ret = io_uring_submit(&t->ring);
	*a1 = now_ns();
	if (ret != n)
		die("io_uring_submit", ret < 0 ? ret : EIO);
}

/* The next user_data of the pool; *reused: it was used on this ring before. */
static uint64_t next_ud(struct tctx *t, int *reused)
{
	uint64_t i = t->ud_next++ % (uint64_t)opt.reuse;

	*reused = t->ud_used[i];
	t->ud_used[i] = 1;
	return UD_BASE + i;
}

struct cqe_ {
	uint64_t ud;
	int32_t res;
	uint32_t flags;
	uint64_t t; /* when it was reaped */
};

static struct cqe_ reap_(struct tctx *t)
{
	struct io_uring_cqe *cqe;
	struct cqe_ c;
	int ret;

	while ((ret = io_uring_wait_cqe(&t->ring, &cqe)) == -EINTR)
		;
	if (ret)
		die("io_uring_wait_cqe", ret);
	c.t = now_ns();
	c.ud = io_uring_cqe_get_data64(cqe);
	c.res = cqe->res;
	c.flags = cqe->flags;
	io_uring_cqe_seen(&t->ring, cqe);
	return c;
}

_Noreturn static void bad_cqe(const char *step, struct cqe_ c)
{
	fprintf(stderr, "truthload: io_uring %s: unexpected CQE user_data 0x%llx res %d flags 0x%x\n",
		step, (unsigned long long)c.ud, c.res, c.flags);
	exit(1);
}

/* (a): the same user_data in flight twice, completed out of order. */
static void uring_reads(struct tctx *t, uint64_t rid)
{
	int q = (int)opt.qdepth, got, reused;
	uint64_t ud[MAX_QDEPTH];
	size_t hp[MAX_QDEPTH], hf[MAX_QDEPTH];
	char pdone[MAX_QDEPTH] = { 0 }, fdone[MAX_QDEPTH] = { 0 };

	for (int k = 0; k < q; k++) {
		struct io_uring_sqe *s = sqe_(t);
		struct hop *h;

		ud[k] = next_ud(t, &reused);
		io_uring_prep_read(s, t->pipes[k][0], t->pbuf[k], sizeof(t->pbuf[k]), 0);
		io_uring_sqe_set_data64(s, ud[k]);
		hp[k] = hop_new(t, rid, M_URING, R_OBJECT, E_SUBMIT, O_IO, (int64_t)ud[k], NULL,
				E_COMPLETE);
		h = H(hp[k]);
		submit_(t, 1, &h->a0, &h->a1);
		h->flags = reused ? HF_REUSED : 0;
	}
	for (int k = 0; k < q; k++) {
		struct io_uring_sqe *s = sqe_(t);
		struct hop *h;

		io_uring_prep_read(s, data_fd, t->fbuf[k], (unsigned)(64 + k), 0);
		io_uring_sqe_set_data64(s, ud[k]);
		hf[k] = hop_new(t, rid, M_URING, R_OBJECT, E_SUBMIT, O_IO, (int64_t)ud[k], NULL,
				E_COMPLETE);
		h = H(hf[k]);
		submit_(t, 1, &h->a0, &h->a1);
		h->c0 = h->a0;
		h->flags = HF_REUSED; /* its pipe read holds the user_data */
	}
	for (got = 0; got < q; got++) {
		struct cqe_ c = reap_(t);
		int k = c.res - 64;

		if (k < 0 || k >= q || fdone[k] || c.ud != ud[k])
			bad_cqe("file read", c);
		fdone[k] = 1;
		H(hf[k])->c1 = c.t;
		H(hf[k])->valid = 1;
	}
	for (int k = 0; k < q; k++) {
		char b[MAX_QDEPTH + 1];

		memset(b, 'A' + k, sizeof(b));
		H(hp[k])->c0 = now_ns();
		if (write(t->pipes[k][1], b, (size_t)k + 1) != k + 1)
			die("write pipe", errno);
	}
	for (got = 0; got < q; got++) {
		struct cqe_ c = reap_(t);
		int k = c.res - 1;

		if (k < 0 || k >= q || pdone[k] || c.ud != ud[k] || t->pbuf[k][0] != 'A' + k ||
		    t->pbuf[k][k] != 'A' + k)
			bad_cqe("pipe read", c);
		pdone[k] = 1;
		H(hp[k])->c1 = c.t;
		H(hp[k])->valid = 1;
	}
}

static void ms_arm(struct tctx *t)
{
	struct io_uring_sqe *s = sqe_(t);

	io_uring_prep_recv_multishot(s, t->sv[0], NULL, 0, 0);
	s->flags |= IOSQE_BUFFER_SELECT;
	s->buf_group = MS_BGID;
	io_uring_sqe_set_data64(s, MS_UD);
	submit_(t, 1, &t->ms_a0, &t->ms_a1);
	t->ms_arm_req = t->cur_app;
	t->ms_armed = 1;
	t->ms_arms++;
}

/* A hop for one CQE of the armed multishot recv. */
static struct hop *ms_hop(struct tctx *t, uint64_t rid)
{
	struct hop *h = H(hop_new(t, rid, M_URING_MS, R_OBJECT, E_SUBMIT, O_IO, (int64_t)MS_UD,
				  NULL, E_COMPLETE));

	h->a0 = t->ms_a0;
	h->a1 = t->ms_a1;
	h->src_req = t->ms_arm_req; /* the context that armed it */
	h->flags = t->ms_arms > 1 ? HF_REUSED : 0;
	return h;
}

/*
 * (b): arm a multishot recv, send MS_MSGS messages (each one CQE with
 * IORING_CQE_F_MORE, known by its bytes), then cancel it (its last CQE,
 * -ECANCELED): every CQE of it is a hop of this request. (Armed across
 * requests, its last CQE would come at the ring's teardown, in no
 * request.)
 */
static void uring_multishot(struct tctx *t, uint64_t rid)
{
	struct io_uring_sqe *s;
	int got_final = 0, got_cancel = 0;
	struct hop *h;
	uint64_t c0, c1;

	ms_arm(t);
	for (int m = 0; m < MS_MSGS; m++) {
		char msg[64];
		int len, bid;
		struct cqe_ c;
		uint64_t s0;

		if (!t->ms_armed)
			ms_arm(t); /* it ended early: armed again */
		len = snprintf(msg, sizeof(msg), "truthload rid %llu tid %d seq %lu",
			       (unsigned long long)rid, (int)t->tid, t->ms_seq++);
		s0 = now_ns();
		if (send(t->sv[1], msg, (size_t)len, 0) != len)
			die("send", errno);
		c = reap_(t);
		bid = (int)(c.flags >> IORING_CQE_BUFFER_SHIFT);
		if (c.ud != MS_UD || c.res != len || !(c.flags & IORING_CQE_F_BUFFER) ||
		    bid >= MS_NBUF || memcmp(t->msbufs + bid * MS_BUFSZ, msg, (size_t)len))
			bad_cqe("multishot recv", c);
		io_uring_buf_ring_add(t->br, t->msbufs + bid * MS_BUFSZ, MS_BUFSZ,
				      (unsigned short)bid, io_uring_buf_ring_mask(MS_NBUF), 0);
		io_uring_buf_ring_advance(t->br, 1);
		h = ms_hop(t, rid);
		h->c0 = s0;
		h->c1 = c.t;
		h->valid = 1;
		if (!(c.flags & IORING_CQE_F_MORE))
			t->ms_armed = 0;
	}
	if (!t->ms_armed)
		return;
	s = sqe_(t);
	io_uring_prep_cancel64(s, MS_UD, 0);
	io_uring_sqe_set_data64(s, MSC_UD);
	h = ms_hop(t, rid);
	submit_(t, 1, &c0, &c1);
	h->c0 = c0;
	while (!got_final || !got_cancel) {
		struct cqe_ c = reap_(t);

		if (c.ud == MS_UD && !got_final && !(c.flags & IORING_CQE_F_MORE) &&
		    c.res == -ECANCELED) {
			got_final = 1;
			h->c1 = c.t;
		} else if (c.ud == MSC_UD && !got_cancel && c.res == 0)
			got_cancel = 1;
		else
			bad_cqe("multishot cancel", c);
	}
	h->valid = 1;
	t->ms_armed = 0;
}

/* (c): WRITE linked to a READ on one pipe, one submit; the hop is the READ. */
static void uring_link(struct tctx *t, uint64_t rid)
{
	struct io_uring_sqe *s;
	char msg[8];
	int reused, gotw = 0, gotr = 0;
	uint64_t rud;
	size_t hi;
	struct hop *h;

	snprintf(msg, sizeof(msg), "L%06llu", (unsigned long long)(rid % 1000000));
	s = sqe_(t);
	io_uring_prep_write(s, t->linkp[1], msg, sizeof(msg), 0);
	io_uring_sqe_set_data64(s, LINKW_UD);
	s->flags |= IOSQE_IO_LINK;
	s = sqe_(t);
	rud = next_ud(t, &reused);
	memset(t->lbuf, 0, sizeof(t->lbuf));
	io_uring_prep_read(s, t->linkp[0], t->lbuf, sizeof(msg), 0);
	io_uring_sqe_set_data64(s, rud);
	hi = hop_new(t, rid, M_URING_LINK, R_OBJECT, E_SUBMIT, O_IO, (int64_t)rud, NULL, E_COMPLETE);
	h = H(hi);
	submit_(t, 2, &h->a0, &h->a1);
	h->c0 = h->a0;
	h->flags = reused ? HF_REUSED : 0;
	while (!gotw || !gotr) {
		struct cqe_ c = reap_(t);

		if (c.ud == LINKW_UD && !gotw && c.res == (int)sizeof(msg))
			gotw = 1;
		else if (c.ud == rud && !gotr && c.res == (int)sizeof(msg) &&
			 !memcmp(t->lbuf, msg, sizeof(msg))) {
			gotr = 1;
			H(hi)->c1 = c.t;
		} else
			bad_cqe("linked pair", c);
	}
	H(hi)->valid = 1;
}

void el_uring(struct tctx *t, uint64_t rid, int affine)
{
	uring_reads(t, rid);
	if (affine)
		return;
	uring_multishot(t, rid);
	uring_link(t, rid);
}

/* ---- workqueue (pty) -------------------------------------------------------------- */
/*
 * The writer is the request's thread; the reader is a thread of its own
 * (a pty_reader, one per front or worker), asleep in read() on the slave
 * before every write. A thread that writes and then reads itself never
 * sees the work's wake: n_tty_read first waits for the port's pending
 * flush_to_ldisc (tty_buffer_flush_work), so its sleep, if any, is ended
 * by the flush's barrier work (wq_barrier_func), not by the data.
 */
struct ptyreader {
	struct tctx t; /* the reader's own */
	pthread_t th;
	int pts, wchan_fd;
	int32_t owner_tid;
	_Atomic uint64_t rid;
	_Atomic size_t hop;
	_Atomic(_Atomic uint32_t *) done;
	_Atomic int expect, ready;
};

static void *ptyreader_main(void *arg)
{
	struct ptyreader *p = arg;
	struct tctx *t = &p->t;

	ctx_init(t, ROLE_PTYREADER, 0);
	atomic_store(&p->ready, 1);
	for (;;) {
		_Atomic uint32_t *done;
		struct hop *h;
		uint64_t r1;
		ssize_t n;
		char c;

		while ((n = read(p->pts, &c, 1)) < 0 && errno == EINTR)
			;
		r1 = now_ns();
		if (n != 1)
			die("read pty slave", n < 0 ? errno : EIO);
		if (c == 0)
			break;
		acct_start(t, atomic_load(&p->rid), r1);
		if (c != atomic_load(&p->expect))
			die("read pty slave: not the byte written", EIO);
		h = H(atomic_load(&p->hop));
		h->c1 = r1;
		h->valid = 1;
		done = atomic_load(&p->done);
		atomic_store(done, 1);
		wake_direct(t, atomic_load(&p->rid), done, p->owner_tid);
		acct_stop(t);
	}
	return NULL;
}

/* Is the reader asleep in n_tty_read's wait for input (not in the flush
 * of a previous work, nor running)? */
static int reader_waits(struct ptyreader *p)
{
	char b[64];
	ssize_t n = pread(p->wchan_fd, b, sizeof(b) - 1, 0);

	if (n <= 0)
		return 0;
	b[n] = 0;
	/* wait_woken, or n_tty_read itself where the compiler folded the
	 * wait into it (the wchan names the caller of schedule()) */
	return !strcmp(b, "wait_woken") || !strcmp(b, "n_tty_read");
}

/* A reader that is not found asleep within 10 s is a kernel whose wait
 * has another name: say so rather than spin forever. */
static void wait_reader(struct ptyreader *p)
{
	uint64_t until = now_ns() + 10000000000ull;

	while (!reader_waits(p)) {
		if (now_ns() > until)
			die("pty reader never seen asleep in n_tty_read (its wchan)", ETIMEDOUT);
		sched_yield();
	}
}

static void ptyreader_start(struct tctx *t)
{
	struct ptyreader *p = calloc(1, sizeof(*p));
	char path[64];
	int rc;

	if (!p)
		die("calloc", ENOMEM);
	open_raw_pty(&t->ptm, &p->pts);
	p->owner_tid = t->tid;
	if ((rc = pthread_create(&p->th, NULL, ptyreader_main, p)))
		die("pthread_create", rc);
	while (!atomic_load(&p->ready))
		sched_yield();
	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", (int)p->t.tid);
	p->wchan_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (p->wchan_fd < 0)
		die(path, errno);
	wait_reader(p);
	t->pr = p;
}

static void ptyreader_stop(struct tctx *t)
{
	struct ptyreader *p = t->pr;
	char z = 0;

	wait_reader(p);
	if (write(t->ptm, &z, 1) != 1)
		die("write pty master", errno);
	pthread_join(p->th, NULL);
	close(p->pts);
	close(p->wchan_fd);
	close(t->ptm);
	/* p stays: its context is in the registry of threads */
	t->pr = NULL;
}

void el_wq(struct tctx *t, uint64_t rid)
{
	struct ptyreader *p = t->pr;
	char c = (char)('a' + rid % 26);
	_Atomic uint32_t *done = fresh_word(t);
	size_t hi;
	struct hop *h;

	wait_reader(p);
	hi = hop_new(t, rid, M_WQ, R_OBJECT, E_QUEUE, O_WORK, -1, "flush_to_ldisc", E_WAKE);
	h = H(hi);
	h->dst_tid = p->t.tid;
	atomic_store(&p->rid, rid);
	atomic_store(&p->hop, hi);
	atomic_store(&p->expect, c);
	atomic_store(&p->done, done);
	h->a0 = h->c0 = now_ns();
	if (write(t->ptm, &c, 1) != 1)
		die("write pty master", errno);
	h->a1 = now_ns();
	/* the reader has the request now, until it wakes this thread, and
	 * this thread, blocked for it, holds it too */
	wait_word(t, done);
}

static long nvcsw(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		die("getrusage", errno);
	return ru.ru_nvcsw;
}

/* ---- timers ---------------------------------------------------------------------- */
void el_timer(struct tctx *t, uint64_t rid)
{
	struct timespec ts = { opt.sleep_us / 1000000, (opt.sleep_us % 1000000) * 1000 };
	struct itimerspec its = { .it_value = ts };
	uint64_t a0, a1, r1, n;
	long v0, v1;
	struct hop *h;
	ssize_t got;

	a0 = now_ns();
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
	a1 = now_ns();
	h = H(hop_new(t, rid, M_TIMER, R_OBJECT, E_ARM, O_TIMER, -1, "hrtimer_wakeup", E_FIRE));
	h->a0 = h->c0 = a0;
	h->a1 = h->c1 = a1;
	h->dst_tid = t->tid;
	h->valid = 1;

	v0 = nvcsw();
	a0 = now_ns();
	if (timerfd_settime(t->tfd, 0, &its, NULL))
		die("timerfd_settime", errno);
	a1 = now_ns();
	while ((got = read(t->tfd, &n, sizeof(n))) < 0 && errno == EINTR)
		;
	r1 = now_ns();
	v1 = nvcsw();
	if (got != (ssize_t)sizeof(n) || n != 1)
		die("read timerfd", got < 0 ? errno : EIO);
	if (v1 > v0) {
		h = H(hop_new(t, rid, M_TIMERFD, R_OBJECT, E_ARM, O_TIMER, -1, "timerfd_tmrproc",
			      E_FIRE));
		h->a0 = h->c0 = a0;
		h->a1 = a1;
		h->c1 = r1;
		h->dst_tid = t->tid;
		h->valid = 1;
	} else
		atomic_fetch_add(&tfd_nosleep, 1);
}
