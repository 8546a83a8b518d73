// SPDX-License-Identifier: MIT
/*
 * causeway-capture: load the CO-RE BPF programs, drain the edge ring into
 * a segmented trace file (contract section 2).
 *
 * Life of a capture:
 *   parse options -> check privilege and BTF (exit 2 naming what is
 *   missing) -> open the output (O_EXCL, never through a symlink) ->
 *   [COMMAND: fork it, blocked on a pipe] -> open, configure, load and
 *   attach the BPF object -> fill the traced set -> snapshot /proc and seal
 *   the metadata segment first -> release COMMAND -> drain the ring; every
 *   second write accounting and seal the events segment (a flusher thread
 *   fdatasyncs the file once a second, off the drain path) ->
 *   stop (signal, duration, command exit, max size, error) -> detach,
 *   drain what is left, write the final segment.
 *
 * The signal handler only sets a flag; the loop wakes at least every
 * POLL_MS to notice it, the child's exit and the second boundary.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "schema/events.h"
#include "schema/format.h"
#include "capture/segwriter.h"
#include "capture/meta.h"
#include "capture/probe.h"
#include "capture/flusher.h"
#include "causeway.skel.h"

#define CW_VERSION "0.1.0"
#define POLL_MS 100
#define EDGE_RING_BYTES (8u << 20)
#define TRACED_MAX 65536
#define MAX_PIDS 1024
#define NS_PER_SEC 1000000000ull

/* Classes -e knows, in CW_CLASS_* order of the contract's list. */
static const struct {
	const char *name;
	int class;
	bool implemented;
} classes[] = {
	{ "sched", CW_CLASS_SCHED, true },
	{ "io_uring", CW_CLASS_IO_URING, false },
	{ "workqueue", CW_CLASS_WORKQUEUE, false },
	{ "timer", CW_CLASS_TIMER, false },
	{ "futex", CW_CLASS_FUTEX, false },
	{ "usdt", CW_CLASS_ADAPTER, false },
};
#define NCLASSES (sizeof(classes) / sizeof(classes[0]))

static struct env {
	const char *output;
	bool force;
	pid_t pids[MAX_PIDS];
	size_t npids;
	char **command;
	uint64_t duration_ns;
	unsigned long freq;
	bool no_offcpu;
	unsigned events;	/* bit per classes[] index */
	bool events_given;
	size_t segment_size;
	uint64_t max_size;
	bool quiet;
} env = {
	.output = "causeway.cwt",
	.freq = 99,
	.segment_size = CW_SEG_DEFAULT_RAW,
};

enum stop_reason { STOP_NONE, STOP_SIGNAL, STOP_DURATION, STOP_COMMAND, STOP_MAX_SIZE, STOP_ERROR };
static const char *const stop_names[] = { "none", "signal", "duration", "command-exit", "max-size",
					  "error" };

static volatile sig_atomic_t exiting;

/* State the ring callback needs. */
struct drain {
	struct cw_writer *w;
	uint64_t events;
	uint64_t max_size;
	int err;       /* first write error */
	bool full;     /* max-size reached */
};

static void sig_handler(int sig)
{
	(void)sig;
	exiting = 1;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void msg(const char *fmt, ...)
{
	va_list ap;

	fputs("causeway-capture: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* ---- options ---------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: causeway-capture [OPTIONS] [-- COMMAND [ARG...]]\n"
		"  -o, --output FILE     trace file (default causeway.cwt); an existing file is\n"
		"                        refused unless --force; never follows a symlink; mode 0600\n"
		"  -p, --pid PID[,PID]   trace these processes and every descendant they fork\n"
		"  -- COMMAND ...        start COMMAND, trace it and its descendants, stop when it exits\n"
		"                        (neither -p nor COMMAND: system-wide)\n"
		"  -d, --duration SECS   stop after SECS\n"
		"  -F, --freq HZ         CPU stack sampling frequency (default 99; 0 = off)\n"
		"      --no-offcpu       do not record off-CPU stacks at switch-out\n"
		"  -e, --events LIST     edge classes: sched,io_uring,workqueue,timer,futex,usdt\n"
		"      --segment-size N  uncompressed bytes per segment (default 1M; K/M/G suffixes)\n"
		"      --max-size N      stop cleanly when the file reaches N bytes (K/M/G suffixes)\n"
		"  -q, --quiet           no status line, no summary\n"
		"      --force           replace an existing regular file\n"
		"  -h, --help            this text\n");
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || (v && mul > UINT64_MAX / v))
		return -EINVAL;
	*out = v * mul;
	return 0;
}

static int parse_pids(const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v;

		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || *end || v <= 0 || v > 0x3fffffff) {
			msg("-p: '%s' is not a process id", tok);
			err = -EINVAL;
			break;
		}
		if (env.npids == MAX_PIDS) {
			msg("-p: more than %d processes", MAX_PIDS);
			err = -EINVAL;
			break;
		}
		env.pids[env.npids++] = (pid_t)v;
	}
	free(copy);
	return err;
}

static int parse_events(const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	env.events = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < NCLASSES; i++)
			if (!strcmp(tok, classes[i].name))
				break;
		if (i == NCLASSES) {
			msg("-e: unknown event class '%s' (known: sched,io_uring,workqueue,timer,futex,usdt)",
			    tok);
			err = -EINVAL;
			break;
		}
		env.events |= 1u << i;
	}
	free(copy);
	if (!err && !env.events) {
		msg("-e: empty class list");
		err = -EINVAL;
	}
	return err;
}

/* @return 0, or 2 (the exit code) after a message. */
static int parse_args(int argc, char **argv)
{
	enum { OPT_FORCE = 256, OPT_NO_OFFCPU, OPT_SEGMENT_SIZE, OPT_MAX_SIZE };
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "freq", required_argument, NULL, 'F' },
		{ "no-offcpu", no_argument, NULL, OPT_NO_OFFCPU },
		{ "events", required_argument, NULL, 'e' },
		{ "segment-size", required_argument, NULL, OPT_SEGMENT_SIZE },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t v;
	char *end;
	double secs;
	int c;

	/* '+': the first non-option starts COMMAND, so its own options are
	 * never taken for ours. */
	while ((c = getopt_long(argc, argv, "+o:p:d:F:e:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg) {
				msg("-o: empty file name");
				return 2;
			}
			env.output = optarg;
			break;
		case OPT_FORCE:
			env.force = true;
			break;
		case 'p':
			if (parse_pids(optarg))
				return 2;
			break;
		case 'd':
			errno = 0;
			secs = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(secs > 0) || secs > 1e9) {
				msg("-d: '%s' is not a positive number of seconds", optarg);
				return 2;
			}
			env.duration_ns = (uint64_t)(secs * 1e9);
			break;
		case 'F':
			errno = 0;
			env.freq = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || *optarg == '-') {
				msg("-F: '%s' is not a frequency in Hz", optarg);
				return 2;
			}
			break;
		case OPT_NO_OFFCPU:
			env.no_offcpu = true;
			break;
		case 'e':
			if (parse_events(optarg))
				return 2;
			env.events_given = true;
			break;
		case OPT_SEGMENT_SIZE:
			if (parse_size(optarg, &v) || v < 4096 || v > CW_SEG_MAX_RAW) {
				msg("--segment-size: '%s' is not a size between 4K and %uM", optarg,
				    CW_SEG_MAX_RAW >> 20);
				return 2;
			}
			env.segment_size = (size_t)v;
			break;
		case OPT_MAX_SIZE:
			if (parse_size(optarg, &v) || v < 64 * 1024) {
				msg("--max-size: '%s' is not a size of at least 64K", optarg);
				return 2;
			}
			env.max_size = v;
			break;
		case 'q':
			env.quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		env.command = &argv[optind];
	if (env.command && env.npids) {
		msg("-p and COMMAND are exclusive");
		return 2;
	}
	if (!env.events_given)
		for (size_t i = 0; i < NCLASSES; i++)
			env.events |= 1u << i;
	return 0;
}

static void notice_classes(void)
{
	char missing[128] = "", recorded[128] = "";

	for (size_t i = 0; i < NCLASSES; i++) {
		char *dst = classes[i].implemented ? recorded : missing;

		if (!(env.events & (1u << i)))
			continue;
		if (*dst)
			strcat(dst, ",");
		strcat(dst, classes[i].name);
	}
	if (env.quiet)
		return;
	if (*missing)
		msg("recording %s; not implemented yet: %s", *recorded ? recorded : "nothing",
		    missing);
	if (env.freq || !env.no_offcpu)
		msg("CPU sampling and off-CPU stacks are not implemented yet: recording edges only "
		    "(-F 0 --no-offcpu silences this)");
}

static void options_string(char *buf, size_t len)
{
	size_t off = 0;

	off += snprintf(buf + off, len - off, "mode=%s",
			env.command ? "command" : env.npids ? "pid" : "system");
	if (env.npids) {
		off += snprintf(buf + off, len - off, " pids=");
		for (size_t i = 0; i < env.npids && off < len; i++)
			off += snprintf(buf + off, len - off, "%s%d", i ? "," : "", env.pids[i]);
	}
	if (off < len)
		off += snprintf(buf + off, len - off, " events=");
	for (size_t i = 0, n = 0; i < NCLASSES && off < len; i++)
		if ((env.events & (1u << i)) && classes[i].implemented)
			off += snprintf(buf + off, len - off, "%s%s", n++ ? "," : "", classes[i].name);
	if (off < len)
		snprintf(buf + off, len - off,
			 " freq=%lu offcpu=%d duration_ns=%" PRIu64 " segment_size=%zu max_size=%" PRIu64,
			 env.freq, !env.no_offcpu, env.duration_ns, env.segment_size, env.max_size);
}

/* ---- output ------------------------------------------------------------ */

/* @return an fd, or -1 after a message. */
static int open_output(const char *path)
{
	struct stat st;
	int fd;

	if (env.force && lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode)) {
			msg("%s is a symbolic link; refusing to write through it", path);
			return -1;
		}
		if (!S_ISREG(st.st_mode)) {
			msg("%s exists and is not a regular file", path);
			return -1;
		}
		if (unlink(path)) {
			msg("cannot replace %s: %s", path, strerror(errno));
			return -1;
		}
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EEXIST && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			msg("%s is a symbolic link; refusing to write through it", path);
		else if (errno == EEXIST)
			msg("%s exists (use --force to replace it)", path);
		else
			msg("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	return fd;
}

static int read_file_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int write_meta(struct cw_writer *w, int argc, char **argv, uint64_t start_ns,
		      const struct proc_snap *snap)
{
	char buf[4096], opts[1024];
	struct utsname u;
	uint64_t mono, real;
	size_t off = 0;
	int err = 0;

	uname(&u);
	/* Back to back, so the analyzer can map capture time to wall time. */
	mono = clock_ns(CLOCK_MONOTONIC);
	real = clock_ns(CLOCK_REALTIME);

	err = err ?: meta__put_kv(w, start_ns, "kernel_release", u.release);
	err = err ?: meta__put_kv(w, start_ns, "hostname", u.nodename);
	if (read_file_line("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)))
		strcpy(buf, "unknown");
	err = err ?: meta__put_kv(w, start_ns, "boot_id", buf);
	buf[0] = 0;
	for (int i = 0; i < argc && off < sizeof(buf); i++)
		off += snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? " " : "", argv[i]);
	err = err ?: meta__put_kv(w, start_ns, "cmdline", buf);
	options_string(opts, sizeof(opts));
	err = err ?: meta__put_kv(w, start_ns, "options", opts);
	err = err ?: meta__put_kv_u64(w, start_ns, "ncpus", (uint64_t)libbpf_num_possible_cpus());
	err = err ?: meta__put_kv(w, start_ns, "clock", "monotonic");
	err = err ?: meta__put_kv_u64(w, start_ns, "anchor_monotonic_ns", mono);
	err = err ?: meta__put_kv_u64(w, start_ns, "anchor_realtime_ns", real);
	err = err ?: meta__put_kv_u64(w, start_ns, "capture_start_ns", start_ns);
	err = err ?: meta__put_kv(w, start_ns, "version", CW_VERSION);
	err = err ?: meta__put_kv_u64(w, start_ns, "capture_pid", (uint64_t)getpid());
	err = err ?: meta__put_kv_u64(w, start_ns, "ring_edge_bytes", EDGE_RING_BYTES);
	err = err ?: proc_snap__write(snap, w);
	err = err ?: cw_writer__seal(w, CW_SEG_META);
	return err;
}

/* ---- accounting ---------------------------------------------------------- */

struct account {
	int fd;		     /* counters map */
	int ncpus;
	uint64_t last_ns;
	struct { uint64_t written, lost; } *prev; /* [key * ncpus + cpu] */
	struct { uint64_t written, lost; } *cur;  /* one key's values */
	uint64_t lost_edge, lost_sample, lost_map; /* running totals */
};

/* Keys as in bpf/causeway.bpf.h: ring * CW_CLASS_MAX + class. */
#define NKEYS (3 * CW_CLASS_MAX)

/*
 * Write one cw_account record per (ring, class, CPU) with the deltas since
 * the last call. Edge-ring records for recorded classes are written even
 * when zero: a window with nothing lost is evidence too.
 */
static int account__flush(struct account *a, struct cw_writer *w, uint64_t now)
{
	for (uint32_t key = 0; key < NKEYS; key++) {
		uint16_t ring = key / CW_CLASS_MAX, class = key % CW_CLASS_MAX;
		bool always = ring == CW_RING_EDGE && class == CW_CLASS_SCHED;

		if (bpf_map_lookup_elem(a->fd, &key, a->cur))
			continue;
		for (int cpu = 0; cpu < a->ncpus; cpu++) {
			uint64_t dw = a->cur[cpu].written - a->prev[key * a->ncpus + cpu].written;
			uint64_t dl = a->cur[cpu].lost - a->prev[key * a->ncpus + cpu].lost;
			struct cw_account r = { 0 };
			int err;

			a->prev[key * a->ncpus + cpu].written = a->cur[cpu].written;
			a->prev[key * a->ncpus + cpu].lost = a->cur[cpu].lost;
			if (ring == CW_RING_EDGE)
				a->lost_edge += dl;
			else if (ring == CW_RING_SAMPLE)
				a->lost_sample += dl;
			else
				a->lost_map += dl;
			if (!dw && !dl && !always)
				continue;
			r.hdr.type = CW_REC_ACCOUNT;
			r.hdr.size = sizeof(r);
			r.hdr.cpu = (uint16_t)cpu;
			r.hdr.ts = now;
			r.window_ns = now - a->last_ns;
			r.written = dw;
			r.lost = dl;
			r.ring = ring;
			r.class = class;
			err = cw_writer__append(w, &r, sizeof(r));
			if (err)
				return err;
		}
	}
	a->last_ns = now;
	return 0;
}

/* ---- ring ------------------------------------------------------------------ */

#define ERR_MAX_SIZE (-ECANCELED)

static int handle_event(void *ctx, void *data, size_t size)
{
	struct drain *d = ctx;
	const struct cw_hdr *h = data;
	int err;

	/* BPF wrote it, but a record that does not describe itself is
	 * never passed on. */
	if (size < sizeof(*h) || h->size != size || size % 8)
		return 0;
	err = cw_writer__append(d->w, data, size);
	if (err) {
		d->err = err;
		return err;
	}
	d->events++;
	if (d->max_size) {
		struct cw_writer_stats st;

		cw_writer__stats(d->w, &st);
		/* pending bytes are uncompressed: an upper bound of what they
		 * will add, so the file stays below the limit */
		if (st.file_bytes + cw_writer__pending(d->w) + 4096 >= d->max_size) {
			d->full = true;
			return ERR_MAX_SIZE;
		}
	}
	return 0;
}

/* ---- COMMAND ------------------------------------------------------------------ */

/*
 * Fork COMMAND blocked on a pipe: it may only exec once the programs are
 * attached and its pid is in the traced set, so its first events are
 * recorded. @return the child pid, or -1 after a message.
 */
static pid_t command__start(char **argv, int *release_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC)) {
		msg("pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		msg("fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127); /* the capture did not start */
		close(p[0]);
		execvp(argv[0], argv);
		fprintf(stderr, "causeway-capture: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*release_fd = p[1];
	return pid;
}

/* Stop a COMMAND still running when the capture stops for another reason. */
static void command__stop(pid_t pid, int *status)
{
	for (int i = 0; i < 200; i++) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return;
		if (i == 0)
			kill(pid, SIGTERM);
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
}

/* ---- status ------------------------------------------------------------------- */

static void human_bytes(uint64_t b, char *buf, size_t len)
{
	if (b >= 1ull << 30)
		snprintf(buf, len, "%.2f GiB", b / (double)(1ull << 30));
	else if (b >= 1ull << 20)
		snprintf(buf, len, "%.1f MiB", b / (double)(1ull << 20));
	else
		snprintf(buf, len, "%.1f KiB", b / 1024.0);
}

static void status_line(const struct cw_writer *w, const struct account *a, uint64_t elapsed,
			double rate)
{
	struct cw_writer_stats st;
	char bytes[32];

	cw_writer__stats(w, &st);
	human_bytes(st.file_bytes, bytes, sizeof(bytes));
	fprintf(stderr, "\r[%5.0fs] %9.0f ev/s  %s written  ratio %.1fx  lost edge %" PRIu64
			" sample %" PRIu64 "\033[K",
		elapsed / 1e9, rate, bytes, st.file_bytes ? (double)st.raw_bytes / st.file_bytes : 0.0,
		a->lost_edge, a->lost_sample);
}

/* ---- main --------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct causeway_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct cw_writer *w = NULL;
	struct flusher *flusher = NULL;
	struct proc_snap *snap = NULL;
	struct account acct = { .fd = -1 };
	struct drain d = { 0 };
	struct cw_writer_opts wopts = { 0 };
	struct cw_writer_stats st;
	enum stop_reason stop = STOP_NONE;
	char why[256];
	pid_t child = 0;
	int child_status = 0, release_fd = -1, fd = -1, err = 0, exit_code = 2, nargs;
	bool child_done = false, created = false, tty, status_shown = false;
	uint64_t start_ns = 0, next_tick, end_ns, last_events = 0;

	err = parse_args(argc, argv);
	if (err)
		return err;
	tty = isatty(STDERR_FILENO) && !env.quiet;

	/* Cannot start: say exactly what is missing. */
	if (probe__privileges(why, sizeof(why))) {
		msg("cannot load BPF programs: %s", why);
		return 2;
	}
	if (probe__vmlinux_btf()) {
		msg("cannot start: /sys/kernel/btf/vmlinux is missing (kernel built without "
		    "CONFIG_DEBUG_INFO_BTF); CO-RE programs need the kernel's BTF");
		return 2;
	}
	for (size_t i = 0; i < env.npids; i++) {
		if (kill(env.pids[i], 0) && errno == ESRCH) {
			msg("-p: no process %d", env.pids[i]);
			return 2;
		}
	}
	notice_classes();
	libbpf_set_print(libbpf_print);

	fd = open_output(env.output);
	if (fd < 0)
		return 2;
	created = true;

	if (env.command) {
		child = command__start(env.command, &release_fd);
		if (child < 0)
			goto cleanup;
	}

	skel = causeway_bpf__open();
	if (!skel) {
		msg("cannot open BPF object: %s", strerror(errno));
		goto cleanup;
	}
	skel->rodata->self_tgid = (__u32)getpid();
	skel->rodata->filter_enabled = env.npids || env.command;
	/* Wake the consumer at 1/8 fill: early enough that a burst between
	 * two polls cannot fill the ring. */
	skel->rodata->wakeup_bytes = EDGE_RING_BYTES / 8;
	bpf_map__set_max_entries(skel->maps.edges, EDGE_RING_BYTES);
	bpf_map__set_max_entries(skel->maps.traced, TRACED_MAX);

	/* Tracepoint variants by the kernel's BTF, never by version. */
	nargs = probe__tp_nargs("sched_switch");
	bpf_program__set_autoload(skel->progs.handle_switch, nargs >= 4);
	bpf_program__set_autoload(skel->progs.handle_switch_v0, nargs < 4);
#if defined(__x86_64__)
	{
		long long delta;

		/* Without the preempt count an interrupt-context wakeup would be
		 * blamed on the task it interrupted: refuse rather than guess. */
		if (probe__preempt_count_delta(&delta)) {
			msg("cannot start: the kernel BTF does not describe the per-CPU "
			    "preempt count (__preempt_count or pcpu_hot, and runqueues in "
			    ".data..percpu); interrupt context cannot be told apart");
			goto cleanup;
		}
		skel->rodata->pc_delta = delta;
		skel->rodata->pc_known = 1;
	}
#endif
	nargs = probe__tp_nargs("sched_process_exit");
	bpf_program__set_autoload(skel->progs.handle_exit, nargs >= 2);
	bpf_program__set_autoload(skel->progs.handle_exit_v0, nargs < 2);
	probe__cleanup();
	if (!(env.events & 1u)) { /* sched not requested */
		struct bpf_program *prog;

		bpf_object__for_each_program(prog, skel->obj)
			bpf_program__set_autoload(prog, false);
	}

	err = causeway_bpf__load(skel);
	if (err) {
		msg("cannot load BPF programs: %s%s", strerror(-err),
		    err == -EPERM ? " (bpf() denied: needs root or CAP_BPF and CAP_PERFMON)" : "");
		goto cleanup;
	}

	/* The traced set: -p processes, their existing descendants, COMMAND. */
	if (env.npids || env.command) {
		int mfd = bpf_map__fd(skel->maps.traced);
		__u8 one = 1;

		for (size_t i = 0; i < env.npids; i++)
			bpf_map_update_elem(mfd, &env.pids[i], &one, BPF_ANY);
		if (child)
			bpf_map_update_elem(mfd, &child, &one, BPF_ANY);
	}

	err = causeway_bpf__attach(skel);
	if (err) {
		msg("cannot attach BPF programs: %s", strerror(-err));
		goto cleanup;
	}
	start_ns = clock_ns(CLOCK_MONOTONIC);

	/* Snapshot after attaching: a task forked meanwhile is either in
	 * the snapshot or seen forking, never neither. */
	snap = proc_snap__new(getpid());
	if (!snap) {
		msg("cannot read /proc: %s", strerror(errno));
		goto cleanup;
	}
	if (env.npids) {
		static pid_t desc[TRACED_MAX];
		size_t n = proc_snap__descendants(snap, env.pids, env.npids, desc, TRACED_MAX);
		int mfd = bpf_map__fd(skel->maps.traced);
		__u8 one = 1;

		for (size_t i = 0; i < n; i++)
			bpf_map_update_elem(mfd, &desc[i], &one, BPF_ANY);
	}

	wopts.segment_size = env.segment_size;
	w = cw_writer__new(fd, &wopts);
	if (!w) {
		msg("cannot start the segment writer: %s", strerror(errno));
		goto cleanup;
	}
	err = write_meta(w, argc, argv, start_ns, snap);
	proc_snap__free(snap);
	snap = NULL;
	if (err) {
		msg("writing %s: %s", env.output, strerror(-err));
		goto cleanup;
	}

	d.w = w;
	d.max_size = env.max_size;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.edges), handle_event, &d, NULL);
	if (!rb) {
		msg("cannot open the edge ring: %s", strerror(errno));
		goto cleanup;
	}
	acct.fd = bpf_map__fd(skel->maps.counters);
	acct.ncpus = libbpf_num_possible_cpus();
	acct.last_ns = start_ns;
	acct.prev = calloc((size_t)NKEYS * acct.ncpus, sizeof(*acct.prev));
	acct.cur = calloc((size_t)acct.ncpus, sizeof(*acct.cur));
	if (!acct.prev || !acct.cur) {
		msg("out of memory");
		goto cleanup;
	}

	signal(SIGINT, sig_handler);
	signal(SIGTERM, sig_handler);

	/* From here on, failures are runtime failures: exit 1. */
	exit_code = 1;
	if (child) {
		if (write(release_fd, "g", 1) != 1) {
			msg("cannot start COMMAND: %s", strerror(errno));
			goto cleanup;
		}
		close(release_fd);
		release_fd = -1;
	}

	flusher = flusher__start(fd);
	if (!flusher) {
		msg("cannot start the flusher thread: %s", strerror(errno));
		goto cleanup;
	}
	next_tick = start_ns + NS_PER_SEC;
	while (stop == STOP_NONE) {
		uint64_t now;

		err = ring_buffer__poll(rb, POLL_MS);
		/* A poll that timed out reports nothing: events submitted
		 * without a wakeup are still waiting. */
		if (err == 0)
			err = ring_buffer__consume(rb);
		if (err < 0 && err != -EINTR) {
			if (d.full) {
				stop = STOP_MAX_SIZE;
			} else {
				msg("writing %s: %s; stopping", env.output,
				    strerror(d.err ? -d.err : -err));
				stop = STOP_ERROR;
			}
			break;
		}
		if (exiting) {
			stop = STOP_SIGNAL;
			break;
		}
		if (child && waitpid(child, &child_status, WNOHANG) == child) {
			child_done = true;
			stop = STOP_COMMAND;
			break;
		}
		now = clock_ns(CLOCK_MONOTONIC);
		if (env.duration_ns && now - start_ns >= env.duration_ns) {
			stop = STOP_DURATION;
			break;
		}
		if (now >= next_tick) {
			/* Segments reach the file at least once a second;
			 * the flusher thread syncs it to the disk. */
			err = account__flush(&acct, w, now);
			err = err ?: cw_writer__seal(w, CW_SEG_EVENTS);
			err = err ?: flusher__error(flusher);
			if (err) {
				msg("writing %s: %s; stopping", env.output, strerror(-err));
				stop = STOP_ERROR;
				break;
			}
			if (tty) {
				double secs = (now - next_tick + NS_PER_SEC) / 1e9;

				status_line(w, &acct, now - start_ns, (d.events - last_events) / secs);
				status_shown = true;
			}
			last_events = d.events;
			/* Fixed rate, so that poll latency does not stretch
			 * the interval between two seals past a second. */
			next_tick += NS_PER_SEC;
			if (next_tick <= now)
				next_tick = now + NS_PER_SEC;
			if (env.max_size) {
				cw_writer__stats(w, &st);
				if (st.file_bytes + cw_writer__pending(w) + 4096 >= env.max_size)
					stop = STOP_MAX_SIZE;
			}
		}
	}

	/* Stop producing, then drain what is left, unless the file is full
	 * or broken. */
	causeway_bpf__detach(skel);
	if (stop != STOP_MAX_SIZE && stop != STOP_ERROR) {
		err = ring_buffer__consume(rb);
		if (err < 0) {
			if (d.full) {
				stop = STOP_MAX_SIZE;
			} else {
				msg("writing %s: %s; stopping", env.output,
				    strerror(d.err ? -d.err : -err));
				stop = STOP_ERROR;
			}
		}
	}
	if (child && !child_done) {
		command__stop(child, &child_status);
		child_done = true;
	}

	end_ns = clock_ns(CLOCK_MONOTONIC);
	err = account__flush(&acct, w, end_ns);
	err = err ?: cw_writer__seal(w, CW_SEG_EVENTS);
	err = err ?: meta__put_kv_u64(w, end_ns, "capture_end_ns", end_ns);
	err = err ?: meta__put_kv_u64(w, end_ns, "events_total", d.events);
	err = err ?: meta__put_kv_u64(w, end_ns, "events_lost", acct.lost_edge + acct.lost_sample);
	err = err ?: meta__put_kv_u64(w, end_ns, "map_overflow", acct.lost_map);
	err = err ?: meta__put_kv(w, end_ns, "stop_reason", stop_names[stop]);
	err = err ?: cw_writer__seal(w, CW_SEG_FINAL);
	flusher__stop(flusher);
	flusher = NULL;
	if (!err && fdatasync(fd))
		err = -errno;
	if (err && stop != STOP_ERROR) {
		msg("writing %s: %s", env.output, strerror(-err));
		stop = STOP_ERROR;
	}
	exit_code = stop == STOP_ERROR ? 1 : 0;

	if (status_shown)
		fputc('\n', stderr);
	if (!env.quiet) {
		char bytes[32];

		cw_writer__stats(w, &st);
		human_bytes(st.file_bytes, bytes, sizeof(bytes));
		fprintf(stderr,
			"causeway-capture: %s: %.1fs, %" PRIu64 " events, %" PRIu64
			" lost (edge %" PRIu64 ", sample %" PRIu64 ", map overflow %" PRIu64
			"), %s in %" PRIu64 " segments (ratio %.1fx), stop: %s\n",
			env.output, (end_ns - start_ns) / 1e9, d.events, acct.lost_edge + acct.lost_sample,
			acct.lost_edge, acct.lost_sample, acct.lost_map, bytes, st.segments,
			st.file_bytes ? (double)st.raw_bytes / st.file_bytes : 0.0, stop_names[stop]);
		if (child && WIFEXITED(child_status))
			fprintf(stderr, "causeway-capture: command exited with status %d\n",
				WEXITSTATUS(child_status));
		else if (child && WIFSIGNALED(child_status))
			fprintf(stderr, "causeway-capture: command killed by signal %d\n",
				WTERMSIG(child_status));
	}
	created = false; /* a trace was written: keep it */

cleanup:
	if (release_fd >= 0)
		close(release_fd); /* an unreleased COMMAND exits 127 */
	if (child && !child_done)
		waitpid(child, &child_status, 0);
	flusher__stop(flusher);
	ring_buffer__free(rb);
	causeway_bpf__destroy(skel);
	cw_writer__free(w);
	proc_snap__free(snap);
	free(acct.prev);
	free(acct.cur);
	if (fd >= 0)
		close(fd);
	/* Nothing worth keeping was written: do not leave an empty file. */
	if (created && exit_code == 2)
		unlink(env.output);
	return exit_code;
}
