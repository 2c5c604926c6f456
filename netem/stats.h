/*
 * Shared-memory stats of pagebench-delay (the file given by --stats).
 *
 * Every field is a little-endian uint64_t; there is no padding anywhere,
 * so a reader can decode it with Python's struct ("<" + "Q" * n).
 * Offsets: header 0..127 (the window clamp's counters at 72..119),
 * dir[0] (up) 128..255, dir[1] (down) 256..383,
 * hist[0] 384..16383, hist[1] 16384..32383; total 32384 bytes.
 *
 * Consistency is a seqlock: the writer makes `seq` odd, updates, and makes
 * it even again. A reader copies the whole struct and retries while seq
 * was odd or changed between before and after the copy.
 */
#ifndef PB_STATS_H
#define PB_STATS_H

#include <stddef.h>
#include <stdint.h>

#define PB_STATS_MAGIC 0x31594C4544425050ULL /* bytes "PPBDELY1" */
#define PB_STATS_VERSION 2 /* 2: the window clamp (rwnd_*) */
#define PB_HIST_BUCKETS 2000

struct pb_dir_stats {
	uint64_t received;        /* packets the kernel queued to us */
	uint64_t accepted;        /* released with NF_ACCEPT */
	uint64_t dropped_loss;    /* dropped by emulated random loss (NF_DROP) */
	uint64_t dropped_full;    /* dropped because our holding FIFO was full */
	uint64_t bytes_received;  /* IP total length of received packets */
	uint64_t bytes_accepted;  /* IP total length of accepted packets */
	uint64_t held;            /* currently held */
	uint64_t held_max;        /* maximum of held */
	uint64_t no_timestamp;    /* no usable kernel timestamp: read time used */
	uint64_t verdict_errors;  /* nfq_set_verdict failures */
	uint64_t lateness_max_ns; /* max (release time - deadline) */
	uint64_t lateness_sum_ns; /* sum of it over released-when-due packets */
	/* The line (--up/--down-rate-bps), 0 without it: packets dropped
	   because its queue was full, and the payload bytes V.42bis took in
	   and the bits it gave the line for them (--v42bis). */
	uint64_t line_dropped;
	uint64_t v42_in_bytes;
	uint64_t v42_out_bits;
	uint64_t reserved[1];
};

struct pb_stats {
	uint64_t magic, version;
	uint64_t seq;          /* seqlock: odd while the program is writing */
	uint64_t pid;
	uint64_t started_ns;   /* CLOCK_MONOTONIC */
	uint64_t updated_ns;   /* CLOCK_MONOTONIC of the last update */
	uint64_t ready;        /* 1 once all its queues are bound */
	uint64_t recv_enobufs; /* netlink socket overruns: the kernel dropped
				  packets it could not queue to us (it counts
				  them as user_dropped); direction unknown */
	uint64_t nl_errors;    /* netlink error replies (e.g. a rejected
				  verdict) and unparsable messages */
	/* The window clamp (--rwnd-queue); all 0 without it. */
	uint64_t rwnd_bytes;           /* --rwnd-bytes, 0 = no clamp */
	uint64_t rwnd_received;        /* packets queued to the rwnd queue */
	uint64_t rwnd_clamped;         /* their window field lowered */
	uint64_t rwnd_wscale_stripped; /* SYNs whose window scale became NOPs */
	uint64_t rwnd_uncopied;        /* longer than the copy range: passed
					  unchanged (never with GSO off) */
	uint64_t rwnd_verdict_errors;  /* nfq_set_verdict failures there */
	uint64_t reserved[1];
	struct pb_dir_stats dir[2];          /* 0 = up, 1 = down */
	uint64_t hist[2][PB_HIST_BUCKETS];   /* release lateness histogram,
						bucket = pb_hist_bucket(us) */
};

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "stats layout is little-endian");
_Static_assert(sizeof(struct pb_dir_stats) == 128, "pb_dir_stats size");
_Static_assert(offsetof(struct pb_stats, seq) == 16, "seq offset");
_Static_assert(offsetof(struct pb_stats, ready) == 48, "ready offset");
_Static_assert(offsetof(struct pb_stats, recv_enobufs) == 56, "enobufs");
_Static_assert(offsetof(struct pb_stats, nl_errors) == 64, "nl_errors");
_Static_assert(offsetof(struct pb_stats, rwnd_bytes) == 72, "rwnd offset");
_Static_assert(offsetof(struct pb_stats, rwnd_verdict_errors) == 112,
	       "rwnd_verdict_errors offset");
_Static_assert(offsetof(struct pb_stats, dir) == 128, "dir offset");
_Static_assert(offsetof(struct pb_stats, hist) == 384, "hist offset");
_Static_assert(sizeof(struct pb_stats) == 384 + 2 * PB_HIST_BUCKETS * 8,
	       "pb_stats size");

#endif
