#include "delay.h"

#include <errno.h>
#include <stdlib.h>

#include "stats.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct dq_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Uniform double in [0, 1) from the top 53 bits. */
static double rng_unit(struct dq_rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n) (Lemire's multiply-shift; bias < n / 2^64). */
static uint64_t rng_below(struct dq_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

int dq_init(struct dq *q, size_t capacity, uint64_t delay_ns,
	    uint64_t jitter_ns, double loss, uint64_t seed)
{
	/* !(loss >= 0) also rejects NaN */
	if (capacity == 0 || (capacity & (capacity - 1)) != 0 ||
	    !(loss >= 0.0 && loss <= 1.0)) {
		errno = EINVAL;
		return -1;
	}
	q->ring = calloc(capacity, sizeof(*q->ring));
	if (!q->ring)
		return -1; /* errno = ENOMEM */
	q->mask = capacity - 1;
	q->head = q->tail = 0;
	q->delay_ns = delay_ns;
	q->jitter_ns = jitter_ns;
	q->loss = loss;
	q->last_deadline = 0;

	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		q->loss_rng.s[i] = splitmix64(&x);
	for (int i = 0; i < 4; i++)
		q->jitter_rng.s[i] = splitmix64(&x);
	return 0;
}

void dq_free(struct dq *q)
{
	free(q->ring);
	q->ring = NULL;
}

size_t dq_len(const struct dq *q)
{
	return q->tail - q->head;
}

int dq_offer(struct dq *q, uint32_t id, uint32_t len, uint64_t arrival_ns,
	     uint64_t *deadline_out)
{
	/* Always draw, so the drop sequence depends only on the seed and the
	 * packet count, not on the configured loss or the FIFO's fill. */
	if (rng_unit(&q->loss_rng) < q->loss)
		return DQ_DROP_LOSS;
	if (dq_len(q) > q->mask)
		return DQ_DROP_FULL;

	uint64_t deadline = arrival_ns + q->delay_ns;
	if (q->jitter_ns) {
		uint64_t j = rng_below(&q->jitter_rng, 2 * q->jitter_ns + 1);
		/* deadline += j - jitter, clamped to >= arrival */
		if (j >= q->jitter_ns)
			deadline += j - q->jitter_ns;
		else if (q->delay_ns >= q->jitter_ns - j)
			deadline -= q->jitter_ns - j;
		else
			deadline = arrival_ns;
	}
	if (deadline < q->last_deadline)
		deadline = q->last_deadline; /* never overtake the previous */
	q->last_deadline = deadline;

	struct dq_entry *e = &q->ring[q->tail & q->mask];
	e->deadline_ns = deadline;
	e->id = id;
	e->len = len;
	q->tail++;
	*deadline_out = deadline;
	return DQ_HOLD;
}

int dq_pop_any(struct dq *q, struct dq_entry *out)
{
	if (q->head == q->tail)
		return 0;
	*out = q->ring[q->head & q->mask];
	q->head++;
	return 1;
}

int dq_pop_due(struct dq *q, uint64_t now_ns, struct dq_entry *out)
{
	if (dq_next_deadline(q) > now_ns)
		return 0;
	return dq_pop_any(q, out);
}

uint64_t dq_due_until(uint64_t now_ns, uint64_t last_verdict_ns, uint64_t cold_gap_ns,
		      uint64_t cold_early_ns)
{
	if (cold_early_ns && (last_verdict_ns == 0 || now_ns - last_verdict_ns > cold_gap_ns))
		return now_ns + cold_early_ns;
	return now_ns;
}

uint64_t dq_next_deadline(const struct dq *q)
{
	if (q->head == q->tail)
		return UINT64_MAX;
	return q->ring[q->head & q->mask].deadline_ns;
}

unsigned pb_hist_bucket(uint64_t lateness_us)
{
	if (lateness_us < 1000)
		return (unsigned)lateness_us;
	if (lateness_us < 100900)
		return 1000 + (unsigned)((lateness_us - 1000) / 100);
	return PB_HIST_BUCKETS - 1;
}
