/*
 * pagebench-delay: userspace link emulator over NFQUEUE, for kernels
 * without sch_netem. Holds every queued packet for delay +- jitter (order
 * preserved), drops a seeded random fraction, and releases the rest with
 * NF_ACCEPT when due. One queue per direction: "up" (client->server) and
 * "down" (server->client). Optionally a third queue clamps the receiver's
 * advertised TCP window (--rwnd-queue): each packet is rewritten and
 * accepted at once; with --no-delay-queues that is all it does (the netem
 * backend, whose delay is in the kernel).
 *
 * With --up/--down-rate-bps it is also the line: a packet is serialized at
 * that rate, queued behind the ones before it (dropped past the queue's
 * --*-queue-bytes at the rate), then delayed. With --v42bis the line is a
 * compressing modem's: a packet's transport payload costs its V.42bis
 * output (line.c, v42bis.c: one dictionary per direction for the whole
 * stream, as the modems compress the serial line), its headers and framing
 * (LINE_FRAMING_BYTES) as they are.
 *
 * This file owns libnetfilter_queue, the clock and the poll loop; the
 * scheduling decisions live in delay.c, the rewrite in rwnd.c, the stats
 * layout in stats.h.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libnetfilter_queue/libnetfilter_queue.h>

#include "delay.h"
#include "line.h"
#include "rwnd.h"
#include "stats.h"
#include "v42bis.h"

#define PROG "pagebench-delay"
#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_SEC 1000000000ULL
#define MAX_DELAY_US 60000000ULL   /* 60 s; keeps all ns arithmetic small */
#define RECV_BATCH 64              /* bound on recv() calls per readable */
#define MAX_WAIT_NS (100 * 1000000ULL) /* ppoll cap: keeps updated_ns fresh */
#define REFRESH_NS (10 * 1000000ULL)   /* republish unchanged stats after */
#define RCVBUF_BYTES (64u << 20)
#define COPY_BYTES 64              /* enough for the IPv4/IPv6 header */
/* The rwnd queue needs whole packets: a verdict's payload replaces the
 * packet, so a shorter copy would truncate it. The kernel caps this at its
 * maximum (0xffff minus an attribute header). */
#define RWND_COPY_BYTES 0xffffu
#define RECV_BYTES (65536 + 4096)  /* a whole-packet message and its attributes */
#define MAX_RATE_BPS 100000000000ULL

struct opts {
	unsigned queue[2];
	uint64_t delay_us[2], jitter_us[2];
	double loss[2];
	uint64_t seed;
	const char *stats_path;
	uint64_t spin_us;
	unsigned rt_priority;
	uint32_t queue_maxlen;
	size_t capacity;
	bool delay_queues;    /* bind up and down (not with --no-delay-queues) */
	unsigned rwnd_queue;
	uint16_t rwnd_bytes;  /* 0: no window clamp, no rwnd queue */
	uint64_t rate_bps[2];   /* 0: no line (the kernel's htb shapes) */
	uint64_t queue_bytes[2]; /* the line's queue, as bytes at its rate */
	unsigned v42_n2, v42_n7; /* n2 0: no V.42bis */
	uint64_t cold_early_us, cold_gap_us; /* early 0: every release on time */
};

struct app;

struct dir {
	struct app *app;
	struct nfq_q_handle *qh;
	struct dq dq;
	/* Local copies, published to the shared file once per iteration. */
	struct pb_dir_stats st;
	struct line line; /* rate 0: none (htb shapes) */
	uint64_t hist[PB_HIST_BUCKETS];
	unsigned hist_lo, hist_hi; /* dirty bucket range; lo > hi if clean */
};

/* The window clamp's queue and counters (stats.h's rwnd_*). */
struct rwnd {
	struct app *app;
	struct nfq_q_handle *qh;
	uint16_t bytes;
	uint64_t received, clamped, wscale_stripped, uncopied, verdict_errors;
};

struct app {
	struct dir dir[2];
	struct rwnd rwnd;
	struct nfq_handle *h;
	int fd;
	struct pb_stats *shm;
	int64_t rt_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	uint64_t read_ns;     /* CLOCK_MONOTONIC when the message was read */
	uint64_t recv_enobufs, nl_errors;
	uint64_t last_verdict_ns; /* CLOCK_MONOTONIC of the last verdict, 0: none yet */
	uint64_t cold_early_ns, cold_gap_ns;
	bool ready; /* all queues bound */
	bool dirty; /* something to publish */
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* ---- command line ------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " --stats PATH [options]\n"
		"  --up-queue N        NFQUEUE number, client->server (default 0)\n"
		"  --down-queue N      NFQUEUE number, server->client (default 1)\n"
		"  --up-delay-us N     one-way delay up, 0..%llu (default 0)\n"
		"  --down-delay-us N   one-way delay down (default 0)\n"
		"  --up-jitter-us N    uniform jitter +-N up (default 0)\n"
		"  --down-jitter-us N  uniform jitter +-N down (default 0)\n"
		"  --up-loss P         drop probability up, 0..1 (default 0)\n"
		"  --down-loss P       drop probability down, 0..1 (default 0)\n"
		"  --seed N            RNG seed; down uses N+1 (default 1)\n"
		"  --stats PATH        shared stats file (required)\n"
		"  --spin-us N         busy-wait the last N us before a "
		"deadline (default 150)\n"
		"  --rt-priority N     SCHED_FIFO priority 1..99, 0 = leave "
		"scheduling alone (default 50)\n"
		"  --queue-maxlen N    kernel queue length (default 65536)\n"
		"  --capacity N        held packets per direction, power of two "
		"(default 1048576)\n"
		"  --rwnd-queue N      NFQUEUE number whose TCP packets get their "
		"window\n"
		"                      clamped (window scaling stripped from "
		"SYNs); needs\n"
		"                      --rwnd-bytes\n"
		"  --rwnd-bytes B      the clamp, 1..65535 bytes\n"
		"  --no-delay-queues   bind only --rwnd-queue: clamp without delay "
		"(the\n"
		"                      --up-*/--down-* options must stay unset)\n"
		"  --up-rate-bps N     serialize up at N bit/s before the delay "
		"(default: no line)\n"
		"  --down-rate-bps N   the same down\n"
		"  --up-queue-bytes N  the line's queue up, bytes at its rate "
		"(default 12112)\n"
		"  --down-queue-bytes N  the same down\n"
		"  --v42bis N2         the line compresses by V.42bis, N2 codewords "
		"(512..65535;\n"
		"                      needs both rates)\n"
		"  --v42bis-max-string N7  V.42bis's longest string, 6..250 "
		"(default 32)\n"
		"  --cold-early-us N   release N us early after an idle moment "
		"(default 0)\n"
		"  --cold-gap-us N     an idle moment: no verdict for N us "
		"(default 1000)\n",
		MAX_DELAY_US);
}

static _Noreturn void bad_arg(const char *opt, const char *allowed,
			      const char *got)
{
	fprintf(stderr, PROG ": --%s: expected %s, got '%s'\n", opt, allowed,
		got);
	exit(2);
}

static uint64_t parse_uint(const char *opt, const char *arg, uint64_t min,
			   uint64_t max)
{
	char allowed[80];
	char *end;
	snprintf(allowed, sizeof(allowed), "an integer in %" PRIu64 "..%" PRIu64,
		 min, max);
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	/* strtoull accepts "-1" and wraps it; insist on a plain digit string */
	if (arg[0] < '0' || arg[0] > '9' || *end || errno || v < min || v > max)
		bad_arg(opt, allowed, arg);
	return v;
}

static double parse_prob(const char *opt, const char *arg)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (end == arg || *end || errno || !(v >= 0.0 && v <= 1.0))
		bad_arg(opt, "a probability in 0..1", arg);
	return v;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	enum {
		O_UP_QUEUE = 256, O_DOWN_QUEUE, O_UP_DELAY, O_DOWN_DELAY,
		O_UP_JITTER, O_DOWN_JITTER, O_UP_LOSS, O_DOWN_LOSS, O_SEED,
		O_STATS, O_SPIN, O_RT, O_MAXLEN, O_CAPACITY, O_RWND_QUEUE,
		O_RWND_BYTES, O_NO_DELAY_QUEUES, O_UP_RATE, O_DOWN_RATE,
		O_UP_QBYTES, O_DOWN_QBYTES, O_V42, O_V42_N7, O_COLD_EARLY,
		O_COLD_GAP,
	};
	static const struct option longopts[] = {
		{"up-queue", required_argument, NULL, O_UP_QUEUE},
		{"down-queue", required_argument, NULL, O_DOWN_QUEUE},
		{"up-delay-us", required_argument, NULL, O_UP_DELAY},
		{"down-delay-us", required_argument, NULL, O_DOWN_DELAY},
		{"up-jitter-us", required_argument, NULL, O_UP_JITTER},
		{"down-jitter-us", required_argument, NULL, O_DOWN_JITTER},
		{"up-loss", required_argument, NULL, O_UP_LOSS},
		{"down-loss", required_argument, NULL, O_DOWN_LOSS},
		{"seed", required_argument, NULL, O_SEED},
		{"stats", required_argument, NULL, O_STATS},
		{"spin-us", required_argument, NULL, O_SPIN},
		{"rt-priority", required_argument, NULL, O_RT},
		{"queue-maxlen", required_argument, NULL, O_MAXLEN},
		{"capacity", required_argument, NULL, O_CAPACITY},
		{"rwnd-queue", required_argument, NULL, O_RWND_QUEUE},
		{"rwnd-bytes", required_argument, NULL, O_RWND_BYTES},
		{"no-delay-queues", no_argument, NULL, O_NO_DELAY_QUEUES},
		{"up-rate-bps", required_argument, NULL, O_UP_RATE},
		{"down-rate-bps", required_argument, NULL, O_DOWN_RATE},
		{"up-queue-bytes", required_argument, NULL, O_UP_QBYTES},
		{"down-queue-bytes", required_argument, NULL, O_DOWN_QBYTES},
		{"v42bis", required_argument, NULL, O_V42},
		{"v42bis-max-string", required_argument, NULL, O_V42_N7},
		{"cold-early-us", required_argument, NULL, O_COLD_EARLY},
		{"cold-gap-us", required_argument, NULL, O_COLD_GAP},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	*o = (struct opts){
		.queue = {0, 1},
		.seed = 1,
		.spin_us = 150,
		.rt_priority = 50,
		.queue_maxlen = 65536,
		.capacity = DQ_DEFAULT_CAPACITY,
		.delay_queues = true,
		.queue_bytes = {8 * 1514, 8 * 1514},
		.v42_n7 = 32,
		.cold_gap_us = 1000,
	};
	const char *delay_opt = NULL; /* a delay-queue option given */
	bool rwnd_queue_given = false;
	opterr = 0; /* we print our own one-line errors */
	int c;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		const char *name = NULL;
		for (const struct option *lo = longopts; lo->name; lo++)
			if (lo->val == c)
				name = lo->name;
		if ((c >= O_UP_QUEUE && c <= O_DOWN_LOSS) ||
		    (c >= O_UP_RATE && c <= O_V42_N7))
			delay_opt = name;
		switch (c) {
		case O_UP_QUEUE:
		case O_DOWN_QUEUE:
			o->queue[c - O_UP_QUEUE] =
				parse_uint(name, optarg, 0, 65535);
			break;
		case O_UP_DELAY:
		case O_DOWN_DELAY:
			o->delay_us[c - O_UP_DELAY] =
				parse_uint(name, optarg, 0, MAX_DELAY_US);
			break;
		case O_UP_JITTER:
		case O_DOWN_JITTER:
			o->jitter_us[c - O_UP_JITTER] =
				parse_uint(name, optarg, 0, MAX_DELAY_US);
			break;
		case O_UP_LOSS:
		case O_DOWN_LOSS:
			o->loss[c - O_UP_LOSS] = parse_prob(name, optarg);
			break;
		case O_SEED:
			o->seed = parse_uint(name, optarg, 0, UINT64_MAX);
			break;
		case O_STATS:
			if (!*optarg)
				bad_arg(name, "a file path", optarg);
			o->stats_path = optarg;
			break;
		case O_SPIN:
			o->spin_us = parse_uint(name, optarg, 0, 1000000);
			break;
		case O_RT:
			o->rt_priority = parse_uint(name, optarg, 0, 99);
			break;
		case O_MAXLEN:
			o->queue_maxlen = parse_uint(name, optarg, 1, UINT32_MAX);
			break;
		case O_CAPACITY: {
			uint64_t v = parse_uint(name, optarg, 1, 1ULL << 26);
			if (v & (v - 1))
				bad_arg(name, "a power of two in 1..67108864",
					optarg);
			o->capacity = v;
			break;
		}
		case O_RWND_QUEUE:
			o->rwnd_queue = parse_uint(name, optarg, 0, 65535);
			rwnd_queue_given = true;
			break;
		case O_RWND_BYTES:
			o->rwnd_bytes = parse_uint(name, optarg, 1, 65535);
			break;
		case O_NO_DELAY_QUEUES:
			o->delay_queues = false;
			break;
		case O_UP_RATE:
		case O_DOWN_RATE:
			o->rate_bps[c - O_UP_RATE] =
				parse_uint(name, optarg, 1, MAX_RATE_BPS);
			break;
		case O_UP_QBYTES:
		case O_DOWN_QBYTES:
			o->queue_bytes[c - O_UP_QBYTES] =
				parse_uint(name, optarg, 1514, 1ULL << 30);
			break;
		case O_V42:
			o->v42_n2 = parse_uint(name, optarg, V42_MIN_N2,
					       V42_MAX_N2);
			break;
		case O_V42_N7:
			o->v42_n7 = parse_uint(name, optarg, V42_MIN_N7,
					       V42_MAX_N7);
			break;
		case O_COLD_EARLY:
			o->cold_early_us = parse_uint(name, optarg, 0, 10000);
			break;
		case O_COLD_GAP:
			o->cold_gap_us = parse_uint(name, optarg, 1, 1000000);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			fprintf(stderr, PROG ": %s: missing value\n",
				argv[optind - 1]);
			exit(2);
		default:
			fprintf(stderr, PROG ": unknown option '%s' (see --help)\n",
				argv[optind - 1]);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s' (see --help)\n",
			argv[optind]);
		exit(2);
	}
	if (!o->stats_path) {
		fprintf(stderr, PROG ": --stats: required, expected a file path\n");
		exit(2);
	}
	if (o->queue[0] == o->queue[1]) {
		fprintf(stderr, PROG ": --down-queue: must differ from "
			"--up-queue (%u)\n", o->queue[0]);
		exit(2);
	}
	if (rwnd_queue_given != (o->rwnd_bytes != 0)) {
		fprintf(stderr, PROG ": %s: needs %s\n",
			rwnd_queue_given ? "--rwnd-queue" : "--rwnd-bytes",
			rwnd_queue_given ? "--rwnd-bytes" : "--rwnd-queue");
		exit(2);
	}
	if (!o->delay_queues && !rwnd_queue_given) {
		fprintf(stderr, PROG ": --no-delay-queues: needs --rwnd-queue "
			"(nothing to do otherwise)\n");
		exit(2);
	}
	if (!o->delay_queues && delay_opt) {
		fprintf(stderr, PROG ": --%s: not with --no-delay-queues\n",
			delay_opt);
		exit(2);
	}
	if (o->v42_n2 && !(o->rate_bps[0] && o->rate_bps[1])) {
		fprintf(stderr, PROG ": --v42bis: needs --up-rate-bps and "
			"--down-rate-bps (the modem's line)\n");
		exit(2);
	}
	if (o->delay_queues && rwnd_queue_given &&
	    (o->rwnd_queue == o->queue[0] || o->rwnd_queue == o->queue[1])) {
		fprintf(stderr, PROG ": --rwnd-queue: must differ from "
			"--up-queue and --down-queue (%u, %u)\n", o->queue[0],
			o->queue[1]);
		exit(2);
	}
}

/* ---- stats ------------------------------------------------------------- */

static void hist_add(struct dir *d, uint64_t lateness_ns)
{
	unsigned b = pb_hist_bucket(lateness_ns / NSEC_PER_USEC);
	d->hist[b]++;
	if (b < d->hist_lo)
		d->hist_lo = b;
	if (b > d->hist_hi)
		d->hist_hi = b;
}

/* Seqlock writer: one odd/even window per call around all changes. */
static void publish(struct app *a, uint64_t now)
{
	struct pb_stats *s = a->shm;
	uint64_t seq = s->seq;

	__atomic_store_n(&s->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++) {
		struct dir *d = &a->dir[i];
		s->dir[i] = d->st;
		if (d->hist_lo <= d->hist_hi)
			memcpy(&s->hist[i][d->hist_lo], &d->hist[d->hist_lo],
			       (d->hist_hi - d->hist_lo + 1) * sizeof(uint64_t));
		d->hist_lo = PB_HIST_BUCKETS; /* clean */
		d->hist_hi = 0;
	}
	s->ready = a->ready;
	s->rwnd_bytes = a->rwnd.bytes;
	s->rwnd_received = a->rwnd.received;
	s->rwnd_clamped = a->rwnd.clamped;
	s->rwnd_wscale_stripped = a->rwnd.wscale_stripped;
	s->rwnd_uncopied = a->rwnd.uncopied;
	s->rwnd_verdict_errors = a->rwnd.verdict_errors;
	s->recv_enobufs = a->recv_enobufs;
	s->nl_errors = a->nl_errors;
	s->updated_ns = now;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELAXED);
	a->dirty = false;
}

static struct pb_stats *open_stats(const char *path, uint64_t now)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, PROG ": --stats %s: cannot create: %s\n", path,
			strerror(errno));
		return NULL;
	}
	/* fchmod: the mode must not depend on the caller's umask */
	if (fchmod(fd, 0644) < 0 ||
	    ftruncate(fd, sizeof(struct pb_stats)) < 0) {
		fprintf(stderr, PROG ": --stats %s: %s\n", path,
			strerror(errno));
		close(fd);
		return NULL;
	}
	struct pb_stats *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
				  MAP_SHARED, fd, 0);
	close(fd);
	if (s == MAP_FAILED) {
		fprintf(stderr, PROG ": --stats %s: mmap: %s\n", path,
			strerror(errno));
		return NULL;
	}
	s->version = PB_STATS_VERSION;
	s->pid = (uint64_t)getpid();
	s->started_ns = now;
	s->updated_ns = now;
	/* magic last, so a reader never sees it over a half-made header */
	__atomic_store_n(&s->magic, PB_STATS_MAGIC, __ATOMIC_RELEASE);
	return s;
}

/* ---- packets ----------------------------------------------------------- */

/* IP length from the copied header; the copy length if not IP. */
static uint32_t ip_length(const unsigned char *p, int n)
{
	if (n >= 20 && p[0] >> 4 == 4)
		return (uint32_t)p[2] << 8 | p[3];
	if (n >= 40 && p[0] >> 4 == 6)
		return ((uint32_t)p[4] << 8 | p[5]) + 40;
	return n > 0 ? (uint32_t)n : 0;
}

static void set_verdict(struct dir *d, uint32_t id, uint32_t verdict)
{
	if (nfq_set_verdict(d->qh, id, verdict, 0, NULL) < 0)
		d->st.verdict_errors++;
	d->app->last_verdict_ns = clock_ns(CLOCK_MONOTONIC);
}

static void accept_entry(struct dir *d, const struct dq_entry *e)
{
	set_verdict(d, e->id, NF_ACCEPT);
	d->st.accepted++;
	d->st.bytes_accepted += e->len;
}

/* Kernel RX time as CLOCK_MONOTONIC, or the read time if it is missing or
 * implausible (future, or older than 1 s). */
static uint64_t arrival_ns(struct dir *d, struct nfq_data *nfad)
{
	struct app *a = d->app;
	struct timeval tv;

	if (nfq_get_timestamp(nfad, &tv) == 0) {
		int64_t rt = (int64_t)tv.tv_sec * (int64_t)NSEC_PER_SEC +
			     (int64_t)tv.tv_usec * (int64_t)NSEC_PER_USEC;
		int64_t mono = rt - a->rt_offset_ns;
		if (mono > 0 && (uint64_t)mono <= a->read_ns &&
		    a->read_ns - (uint64_t)mono <= NSEC_PER_SEC)
			return (uint64_t)mono;
	}
	d->st.no_timestamp++;
	return a->read_ns;
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *nfmsg,
		     struct nfq_data *nfad, void *data)
{
	struct dir *d = data;
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfad);
	unsigned char *payload = NULL;
	uint64_t deadline;

	(void)qh;
	(void)nfmsg;
	d->app->dirty = true;
	if (!ph) {
		d->app->nl_errors++;
		return 0;
	}
	uint32_t id = ntohl(ph->packet_id);
	int copied = nfq_get_payload(nfad, &payload);
	uint32_t len = ip_length(payload, copied);

	d->st.received++;
	d->st.bytes_received += len;
	uint64_t arrival = arrival_ns(d, nfad);
	if (d->line.rate_bps) {
		uint64_t in, out;
		if (!line_offer(&d->line, payload, copied > 0 ? (size_t)copied : 0,
				len, arrival, &arrival, &in, &out)) {
			d->st.line_dropped++; /* the line's queue is full */
			set_verdict(d, id, NF_DROP);
			return 0;
		}
		d->st.v42_in_bytes += in; /* the delay starts once sent */
		d->st.v42_out_bits += out;
	}
	switch (dq_offer(&d->dq, id, len, arrival, &deadline)) {
	case DQ_DROP_LOSS:
		d->st.dropped_loss++;
		set_verdict(d, id, NF_DROP);
		break;
	case DQ_DROP_FULL:
		d->st.dropped_full++;
		set_verdict(d, id, NF_DROP);
		break;
	default: /* DQ_HOLD: released by release_due() */
		d->st.held = dq_len(&d->dq);
		if (d->st.held > d->st.held_max)
			d->st.held_max = d->st.held;
		break;
	}
	return 0;
}

/* The window clamp: rewrite and accept at once, with the rewritten packet
 * as the verdict's payload (its length is the packet's: the kernel would
 * trim the packet to a shorter one). Unchanged packets go back without a
 * payload, which leaves them as they are. */
static int on_rwnd_packet(struct nfq_q_handle *qh, struct nfgenmsg *nfmsg,
			  struct nfq_data *nfad, void *data)
{
	struct rwnd *r = data;
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfad);
	unsigned char *payload = NULL;
	unsigned changed = 0;

	(void)nfmsg;
	r->app->dirty = true;
	if (!ph) {
		r->app->nl_errors++;
		return 0;
	}
	uint32_t id = ntohl(ph->packet_id);
	int copied = nfq_get_payload(nfad, &payload);

	r->received++;
	if (copied > 0 && ip_length(payload, copied) > (uint32_t)copied)
		r->uncopied++; /* a part only: rewriting would truncate it */
	else if (copied > 0)
		changed = rwnd_rewrite(payload, (size_t)copied, r->bytes);
	if (changed & RWND_CLAMPED)
		r->clamped++;
	if (changed & RWND_WSCALE_STRIPPED)
		r->wscale_stripped++;
	int rc = changed ? nfq_set_verdict(qh, id, NF_ACCEPT, (uint32_t)copied,
					   payload)
			 : nfq_set_verdict(qh, id, NF_ACCEPT, 0, NULL);
	r->app->last_verdict_ns = clock_ns(CLOCK_MONOTONIC);
	if (rc < 0)
		r->verdict_errors++;
	return 0;
}

/* Read up to RECV_BATCH messages without blocking. Returns -1 on a fatal
 * socket error. */
static int drain(struct app *a)
{
	static char buf[RECV_BYTES] __attribute__((aligned(8)));

	for (int i = 0; i < RECV_BATCH; i++) {
		ssize_t n = recv(a->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == ENOBUFS) {
				/* the kernel dropped what it could not queue
				 * to us; the socket stays usable */
				a->recv_enobufs++;
				a->dirty = true;
				continue;
			}
			if (errno == EINTR)
				continue;
			fprintf(stderr, PROG ": recv: %s\n", strerror(errno));
			return -1;
		}
		a->read_ns = clock_ns(CLOCK_MONOTONIC);
		if (nfq_handle_packet(a->h, buf, (int)n) < 0) {
			a->nl_errors++;
			a->dirty = true;
		}
	}
	return 0;
}

/* Release every due packet. Per direction, all packets due at `now` go out
 * in one batch verdict ("every id up to this one"): held packets leave in id
 * order, so the batch is exactly the due head of the FIFO. A TCP sender on
 * an unshaped veth bursts hundreds of segments that fall due together, and
 * one verdict each would make the tail of the burst late by the syscalls of
 * the ones before it. The clock is re-read per round, so lateness says when
 * each batch was actually issued. */
static void release_due(struct app *a)
{
	for (;;) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		/* after an idle moment, what falls due within cold_early goes now */
		uint64_t until = dq_due_until(now, a->last_verdict_ns, a->cold_gap_ns,
					      a->cold_early_ns);
		bool released = false;

		for (int i = 0; i < 2; i++) {
			struct dir *d = &a->dir[i];
			struct dq_entry e;
			uint32_t last = 0;
			bool any = false;

			while (dq_pop_due(&d->dq, until, &e)) {
				/* lateness against the release time aimed at */
				uint64_t late = until - e.deadline_ns;
				hist_add(d, late);
				d->st.lateness_sum_ns += late;
				if (late > d->st.lateness_max_ns)
					d->st.lateness_max_ns = late;
				d->st.accepted++;
				d->st.bytes_accepted += e.len;
				last = e.id;
				any = true;
			}
			if (!any)
				continue;
			if (nfq_set_verdict_batch(d->qh, last, NF_ACCEPT) < 0)
				d->st.verdict_errors++;
			a->last_verdict_ns = clock_ns(CLOCK_MONOTONIC);
			d->st.held = dq_len(&d->dq);
			released = true;
		}
		if (!released)
			return;
		a->dirty = true;
	}
}

/* Release everything still held now (shutdown): early, so no lateness. */
static void flush(struct app *a)
{
	for (int i = 0; i < 2; i++) {
		struct dir *d = &a->dir[i];
		struct dq_entry e;

		while (dq_pop_any(&d->dq, &e))
			accept_entry(d, &e);
		d->st.held = 0;
	}
	a->dirty = true;
}

/* ---- setup ------------------------------------------------------------- */

static int bind_queue(struct app *a, int i, const struct opts *o)
{
	static const char *const names[2] = {"up", "down"};
	struct dir *d = &a->dir[i];

	d->qh = nfq_create_queue(a->h, (uint16_t)o->queue[i], on_packet, d);
	if (!d->qh) {
		fprintf(stderr, PROG ": cannot bind NFQUEUE %u (%s): %s "
			"(already bound by another process?)\n", o->queue[i],
			names[i], strerror(errno));
		return -1;
	}
	/* V.42bis reads the payload: whole packets (as the window clamp) */
	if (nfq_set_mode(d->qh, NFQNL_COPY_PACKET,
			 d->line.v42_on ? RWND_COPY_BYTES : COPY_BYTES) < 0 ||
	    nfq_set_queue_maxlen(d->qh, o->queue_maxlen) < 0) {
		fprintf(stderr, PROG ": cannot configure NFQUEUE %u (%s): %s\n",
			o->queue[i], names[i], strerror(errno));
		return -1;
	}
	return 0;
}

static int bind_rwnd_queue(struct app *a, const struct opts *o)
{
	struct rwnd *r = &a->rwnd;

	r->qh = nfq_create_queue(a->h, (uint16_t)o->rwnd_queue, on_rwnd_packet,
				 r);
	if (!r->qh) {
		fprintf(stderr, PROG ": cannot bind NFQUEUE %u (rwnd): %s "
			"(already bound by another process?)\n", o->rwnd_queue,
			strerror(errno));
		return -1;
	}
	if (nfq_set_mode(r->qh, NFQNL_COPY_PACKET, RWND_COPY_BYTES) < 0 ||
	    nfq_set_queue_maxlen(r->qh, o->queue_maxlen) < 0) {
		fprintf(stderr, PROG ": cannot configure NFQUEUE %u (rwnd): "
			"%s\n", o->rwnd_queue, strerror(errno));
		return -1;
	}
	return 0;
}

static int setup_nfq(struct app *a, const struct opts *o)
{
	/* nfq_bind_pf/nfq_unbind_pf are no-ops since Linux 3.8: not called */
	a->h = nfq_open();
	if (!a->h) {
		fprintf(stderr, PROG ": nfq_open: %s (needs root and the "
			"nfnetlink_queue module)\n", strerror(errno));
		return -1;
	}
	a->fd = nfq_fd(a->h);
	/* A deep socket buffer absorbs bursts; SO_RCVBUFFORCE as root. */
	unsigned got = nfnl_rcvbufsiz(nfq_nfnlh(a->h), RCVBUF_BYTES);
	if (got < RCVBUF_BYTES)
		fprintf(stderr, PROG ": warning: netlink receive buffer is "
			"%u bytes, wanted %u\n", got, RCVBUF_BYTES);
	for (int i = 0; o->delay_queues && i < 2; i++)
		if (bind_queue(a, i, o) < 0)
			return -1;
	if (o->rwnd_bytes && bind_rwnd_queue(a, o) < 0)
		return -1;
	return 0;
}

static void teardown_nfq(struct app *a)
{
	for (int i = 0; i < 2; i++)
		if (a->dir[i].qh)
			nfq_destroy_queue(a->dir[i].qh);
	if (a->rwnd.qh)
		nfq_destroy_queue(a->rwnd.qh);
	if (a->h)
		nfq_close(a->h);
}

static void setup_realtime(const struct opts *o)
{
	/* ppoll wake-ups to the nanosecond instead of the default 50 us */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		fprintf(stderr, PROG ": warning: mlockall: %s\n",
			strerror(errno));
	if (o->rt_priority) {
		struct sched_param sp = {.sched_priority = (int)o->rt_priority};
		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
			fprintf(stderr, PROG ": warning: SCHED_FIFO %u: %s; "
				"running with normal scheduling\n",
				o->rt_priority, strerror(errno));
	}
}

/* The kernel stamps received packets only while some socket asks for
 * timestamps; this socket does, for as long as it stays open. */
static int enable_rx_timestamps(void)
{
	int on = 1;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &on, sizeof(on)) < 0) {
		fprintf(stderr, PROG ": cannot enable kernel RX timestamps: "
			"%s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* ---- main loop --------------------------------------------------------- */

static int run(struct app *a, const struct opts *o, const sigset_t *waitmask)
{
	/* wake early enough for a cold release as well */
	uint64_t spin_ns = (o->spin_us + o->cold_early_us) * NSEC_PER_USEC;
	uint64_t last_publish = 0;

	while (!stop_requested) {
		release_due(a);
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		a->rt_offset_ns =
			(int64_t)clock_ns(CLOCK_REALTIME) - (int64_t)now;
		/* before sleeping: a reader waiting for the queues to empty
		 * must see the last release now, not when the sleep ends */
		if (a->dirty || now - last_publish >= REFRESH_NS) {
			publish(a, now);
			last_publish = now;
		}

		uint64_t next = dq_next_deadline(&a->dir[0].dq);
		uint64_t next_down = dq_next_deadline(&a->dir[1].dq);
		if (next_down < next)
			next = next_down;
		uint64_t wait_ns = 0; /* spin: poll without sleeping until due */
		if (next > now + spin_ns)
			wait_ns = next - spin_ns - now; /* huge when empty */
		if (wait_ns > MAX_WAIT_NS)
			wait_ns = MAX_WAIT_NS;
		struct timespec ts = {
			.tv_sec = (time_t)(wait_ns / NSEC_PER_SEC),
			.tv_nsec = (long)(wait_ns % NSEC_PER_SEC),
		};
		struct pollfd pfd = {.fd = a->fd, .events = POLLIN};
		int n = ppoll(&pfd, 1, &ts, waitmask);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, PROG ": ppoll: %s\n", strerror(errno));
			return -1;
		}
		/* POLLERR is how a pending ENOBUFS shows up */
		if (n > 0 && (pfd.revents & (POLLIN | POLLERR)) &&
		    drain(a) < 0)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct app a; /* large (histograms): keep it off the stack */
	struct opts o;
	sigset_t block, waitmask;

	parse_args(argc, argv, &o);

	/* SIGTERM/SIGINT arrive only inside ppoll, so the loop never sees a
	 * half-done iteration; the handler just sets the stop flag. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGINT);
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	setup_realtime(&o);
	int ts_fd = enable_rx_timestamps();
	if (ts_fd < 0)
		return 1;

	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	a.shm = open_stats(o.stats_path, now);
	if (!a.shm)
		return 1;
	a.rwnd.app = &a;
	a.rwnd.bytes = o.rwnd_bytes;
	a.cold_early_ns = o.cold_early_us * NSEC_PER_USEC;
	a.cold_gap_ns = o.cold_gap_us * NSEC_PER_USEC;
	for (int i = 0; i < 2; i++) {
		struct dir *d = &a.dir[i];
		d->app = &a;
		d->hist_lo = PB_HIST_BUCKETS; /* clean dirty range */
		/* unbound: a zeroed FIFO stays empty, nothing to allocate */
		if (o.delay_queues && dq_init(&d->dq, o.capacity, o.delay_us[i] * NSEC_PER_USEC,
			    o.jitter_us[i] * NSEC_PER_USEC, o.loss[i],
			    o.seed + (uint64_t)i) < 0) {
			fprintf(stderr, PROG ": cannot allocate the holding "
				"FIFO: %s\n", strerror(errno));
			return 1;
		}
		if (o.rate_bps[i] && line_init(&d->line, o.rate_bps[i],
					       o.queue_bytes[i], o.v42_n2,
					       o.v42_n7) < 0) {
			fprintf(stderr, PROG ": cannot allocate the V.42bis "
				"dictionary: %s\n", strerror(errno));
			return 1;
		}
	}
	if (setup_nfq(&a, &o) < 0) {
		teardown_nfq(&a);
		return 1;
	}

	a.ready = true;
	publish(&a, clock_ns(CLOCK_MONOTONIC));
	printf("ready\n");
	fflush(stdout);

	int rc = run(&a, &o, &waitmask) < 0 ? 1 : 0;

	/* Shutdown: take what is already queued to us, release everything
	 * held. Whatever is still unread when the queues are destroyed is
	 * dropped by the kernel (fail closed). */
	if (rc == 0)
		drain(&a);
	flush(&a);
	publish(&a, clock_ns(CLOCK_MONOTONIC));
	teardown_nfq(&a);
	for (int i = 0; i < 2; i++) {
		dq_free(&a.dir[i].dq);
		line_free(&a.dir[i].line);
	}
	munmap(a.shm, sizeof(*a.shm));
	close(ts_fd);
	return rc;
}
