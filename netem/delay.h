/*
 * Pure per-direction delay queue for pagebench-delay.
 *
 * No clock reads and no I/O: every time is passed in by the caller as
 * uint64 nanoseconds, so the logic can be tested with a fake clock.
 *
 * A held packet gets deadline = arrival + delay + uniform jitter, never
 * before its arrival and never before the previous held packet's deadline.
 * The last rule keeps packet order (no reordering) and keeps the FIFO's
 * deadlines non-decreasing, so the head is always the next packet due.
 */
#ifndef PB_DELAY_H
#define PB_DELAY_H

#include <stddef.h>
#include <stdint.h>

enum dq_verdict {
	DQ_HOLD = 0,      /* held; release at *deadline_out */
	DQ_DROP_LOSS = 1, /* dropped by the emulated random loss */
	DQ_DROP_FULL = 2, /* dropped because the FIFO is at capacity */
};

struct dq_entry {
	uint64_t deadline_ns;
	uint32_t id;  /* caller's packet id (NFQUEUE packet id) */
	uint32_t len; /* caller's tag (IP length in bytes); fits the padding */
};

/* xoshiro256** state */
struct dq_rng {
	uint64_t s[4];
};

struct dq {
	struct dq_entry *ring;
	size_t mask; /* capacity - 1; capacity is a power of two */
	size_t head; /* index of the oldest entry (free-running) */
	size_t tail; /* index one past the newest entry (free-running) */
	uint64_t delay_ns;
	uint64_t jitter_ns;
	double loss;
	/* Separate streams so the drop sequence for a seed does not depend
	 * on whether jitter is configured. */
	struct dq_rng loss_rng;
	struct dq_rng jitter_rng;
	uint64_t last_deadline;
};

#define DQ_DEFAULT_CAPACITY ((size_t)1 << 20)

/* Returns 0, or -1 with errno EINVAL (bad capacity/loss) or ENOMEM. */
int dq_init(struct dq *q, size_t capacity, uint64_t delay_ns,
	    uint64_t jitter_ns, double loss, uint64_t seed);
void dq_free(struct dq *q);

/* Decide the fate of a packet arriving at arrival_ns (enum dq_verdict).
 * *deadline_out is set only for DQ_HOLD. */
int dq_offer(struct dq *q, uint32_t id, uint32_t len, uint64_t arrival_ns,
	     uint64_t *deadline_out);

/* Pop the head into *out if its deadline is <= now; returns 1 if popped. */
int dq_pop_due(struct dq *q, uint64_t now_ns, struct dq_entry *out);
/* Pop the head regardless of its deadline (flush); returns 1 if popped. */
int dq_pop_any(struct dq *q, struct dq_entry *out);

/* The time up to which deadlines are due at `now_ns`: now, or `cold_early_ns` later when
 * no verdict was issued for longer than `cold_gap_ns` (last_verdict_ns 0: never). A verdict
 * after an idle moment reaches the wire later than one right after another (the kernel's
 * forwarding path is out of the caches, the vCPU was halted): such a release is issued that
 * much early, as measured by pagebench's link check. */
uint64_t dq_due_until(uint64_t now_ns, uint64_t last_verdict_ns, uint64_t cold_gap_ns,
		      uint64_t cold_early_ns);

/* Deadline of the head, UINT64_MAX if empty. */
uint64_t dq_next_deadline(const struct dq *q);
size_t dq_len(const struct dq *q);

/* Lateness histogram bucket for a lateness in whole microseconds:
 * 1 us buckets below 1 ms, 100 us buckets up to 100.9 ms, then overflow. */
unsigned pb_hist_bucket(uint64_t lateness_us);

#endif
