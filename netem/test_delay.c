/* Tests of the pure delay queue (delay.c) with a fake clock. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "delay.h"
#include "stats.h"

#define MS 1000000ULL
#define US 1000ULL

static int failures_in_test;

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n",       \
				__FILE__, __LINE__, #cond);                \
			failures_in_test++;                                \
		}                                                          \
	} while (0)

static void init_or_die(struct dq *q, size_t cap, uint64_t delay,
			uint64_t jitter, double loss, uint64_t seed)
{
	if (dq_init(q, cap, delay, jitter, loss, seed) != 0) {
		perror("dq_init");
		exit(2);
	}
}

static void test_init_validation(void)
{
	struct dq q;
	CHECK(dq_init(&q, 0, 0, 0, 0, 1) == -1 && errno == EINVAL);
	CHECK(dq_init(&q, 3, 0, 0, 0, 1) == -1 && errno == EINVAL);
	CHECK(dq_init(&q, 4, 0, 0, -0.1, 1) == -1 && errno == EINVAL);
	CHECK(dq_init(&q, 4, 0, 0, 1.5, 1) == -1 && errno == EINVAL);
	CHECK(dq_init(&q, 4, 0, 0, NAN, 1) == -1 && errno == EINVAL);
	CHECK(dq_init(&q, 1, 0, 0, 1.0, 1) == 0);
	dq_free(&q);
}

static void test_exact_delay(void)
{
	struct dq q;
	struct dq_entry e;
	uint64_t dl;

	init_or_die(&q, 16, 25 * MS, 0, 0.0, 1);
	CHECK(dq_len(&q) == 0);
	CHECK(dq_next_deadline(&q) == UINT64_MAX);
	CHECK(!dq_pop_due(&q, UINT64_MAX, &e));

	CHECK(dq_offer(&q, 7, 1500, 1000 * MS, &dl) == DQ_HOLD);
	CHECK(dl == 1025 * MS);
	CHECK(dq_len(&q) == 1);
	CHECK(dq_next_deadline(&q) == 1025 * MS);
	CHECK(!dq_pop_due(&q, 1025 * MS - 1, &e));
	CHECK(dq_pop_due(&q, 1025 * MS, &e));
	CHECK(e.id == 7 && e.len == 1500 && e.deadline_ns == 1025 * MS);
	CHECK(dq_len(&q) == 0);
	dq_free(&q);
}

/* Dense train (1 us apart) with jitter 5 ms: deadlines must never go
 * backwards, never be early, never exceed the jitter band unless pushed
 * by the previous packet. Sparse train: both band ends are reached. */
static void test_jitter_bounds_and_order(void)
{
	struct dq q;
	uint64_t dl, prev = 0;
	const uint64_t delay = 10 * MS, jitter = 5 * MS;

	init_or_die(&q, 1 << 20, delay, jitter, 0.0, 42);
	for (uint32_t i = 0; i < 200000; i++) {
		uint64_t t = 1000 * MS + i * US;
		CHECK(dq_offer(&q, i, 100, t, &dl) == DQ_HOLD);
		CHECK(dl >= prev);
		CHECK(dl >= t + delay - jitter);
		CHECK(dl <= t + delay + jitter || dl == prev);
		prev = dl;
		if (failures_in_test)
			break;
	}
	struct dq_entry e;
	uint32_t want = 0;
	uint64_t last = 0;
	while (dq_pop_any(&q, &e)) {
		CHECK(e.id == want++);
		CHECK(e.deadline_ns >= last);
		last = e.deadline_ns;
	}
	CHECK(want == 200000);
	dq_free(&q);

	init_or_die(&q, 1 << 16, delay, jitter, 0.0, 43);
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (uint32_t i = 0; i < 20000; i++) {
		struct dq_entry x;
		uint64_t t = (uint64_t)(i + 1) * 100 * MS; /* > band apart */
		CHECK(dq_offer(&q, i, 100, t, &dl) == DQ_HOLD);
		int64_t off = (int64_t)(dl - t) - (int64_t)delay;
		lo = off < lo ? off : lo;
		hi = off > hi ? off : hi;
		CHECK(dq_pop_due(&q, dl, &x));
	}
	CHECK(lo >= -(int64_t)jitter && lo < -(int64_t)jitter + 10 * (int64_t)US);
	CHECK(hi <= (int64_t)jitter && hi > (int64_t)jitter - 10 * (int64_t)US);
	dq_free(&q);
}

/* Jitter larger than the delay: deadline is clamped to the arrival. */
static void test_jitter_clamp(void)
{
	struct dq q;
	uint64_t dl;
	int clamped = 0;

	init_or_die(&q, 1 << 16, 1 * MS, 4 * MS, 0.0, 5);
	for (uint32_t i = 0; i < 10000; i++) {
		struct dq_entry e;
		uint64_t t = (uint64_t)(i + 1) * 100 * MS;
		CHECK(dq_offer(&q, i, 1, t, &dl) == DQ_HOLD);
		CHECK(dl >= t && dl <= t + 5 * MS);
		clamped += dl == t;
		CHECK(dq_pop_due(&q, dl, &e));
	}
	CHECK(clamped > 3000 && clamped < 4500); /* ~3/8 of the draws */
	dq_free(&q);
}

static void test_loss_rate(void)
{
	struct dq q;
	uint64_t dl;
	int drops = 0;
	const int n = 200000;

	init_or_die(&q, 1 << 20, 0, 0, 0.01, 1);
	for (int i = 0; i < n; i++) {
		int r = dq_offer(&q, (uint32_t)i, 1, (uint64_t)i * US, &dl);
		CHECK(r == DQ_HOLD || r == DQ_DROP_LOSS);
		drops += r == DQ_DROP_LOSS;
	}
	double rate = (double)drops / n;
	printf("loss 0.01 over %d packets: %.4f%%\n", n, rate * 100);
	CHECK(rate >= 0.009 && rate <= 0.011);
	CHECK(dq_len(&q) == (size_t)(n - drops));
	dq_free(&q);

	/* the extremes */
	init_or_die(&q, 1024, 0, 0, 0.0, 9);
	for (int i = 0; i < 1000; i++)
		CHECK(dq_offer(&q, (uint32_t)i, 1, 0, &dl) == DQ_HOLD);
	dq_free(&q);
	init_or_die(&q, 1024, 0, 0, 1.0, 9);
	for (int i = 0; i < 1000; i++)
		CHECK(dq_offer(&q, (uint32_t)i, 1, 0, &dl) == DQ_DROP_LOSS);
	CHECK(dq_len(&q) == 0);
	dq_free(&q);
}

/* Decision string (drop or deadline) of n packets for a configuration. */
static void run_sequence(uint64_t seed, uint64_t jitter, int n, int *verdict,
			 uint64_t *deadline)
{
	struct dq q;
	init_or_die(&q, 1 << 16, 5 * MS, jitter, 0.05, seed);
	for (int i = 0; i < n; i++) {
		deadline[i] = 0;
		verdict[i] = dq_offer(&q, (uint32_t)i, 1,
				      (uint64_t)i * 10 * MS, &deadline[i]);
	}
	dq_free(&q);
}

static void test_determinism(void)
{
	enum { N = 5000 };
	static int va[N], vb[N], vc[N], vd[N];
	static uint64_t da[N], db[N], dc[N], dd[N];

	run_sequence(123, 2 * MS, N, va, da);
	run_sequence(123, 2 * MS, N, vb, db);
	run_sequence(124, 2 * MS, N, vc, dc);
	run_sequence(123, 0, N, vd, dd);
	int same_ab = 1, same_ac = 1, same_loss_ad = 1, same_dl_ac = 1;
	for (int i = 0; i < N; i++) {
		same_ab &= va[i] == vb[i] && da[i] == db[i];
		same_ac &= va[i] == vc[i];
		same_dl_ac &= da[i] == dc[i];
		same_loss_ad &= va[i] == vd[i];
	}
	CHECK(same_ab);       /* same seed: identical decisions */
	CHECK(!same_ac);      /* different seed: different drops */
	CHECK(!same_dl_ac);   /* ... and different jitter */
	CHECK(same_loss_ad);  /* drops do not depend on the jitter setting */
}

static void test_full(void)
{
	struct dq q;
	struct dq_entry e;
	uint64_t dl;

	init_or_die(&q, 8, 1 * MS, 0, 0.0, 1);
	for (uint32_t i = 0; i < 8; i++)
		CHECK(dq_offer(&q, i, 1, i, &dl) == DQ_HOLD);
	CHECK(dq_offer(&q, 8, 1, 8, &dl) == DQ_DROP_FULL);
	CHECK(dq_len(&q) == 8);
	CHECK(dq_pop_due(&q, UINT64_MAX - 1, &e) && e.id == 0);
	CHECK(dq_offer(&q, 9, 1, 9, &dl) == DQ_HOLD);
	CHECK(dq_offer(&q, 10, 1, 10, &dl) == DQ_DROP_FULL);
	dq_free(&q);

	/* wrap the ring many times; FIFO order survives */
	init_or_die(&q, 8, 1 * MS, 0, 0.0, 1);
	uint32_t next_in, next_out = 0;
	for (next_in = 0; next_in < 8; next_in++)
		CHECK(dq_offer(&q, next_in, 1, next_in, &dl) == DQ_HOLD);
	for (int round = 0; round < 1000 && !failures_in_test; round++) {
		CHECK(dq_pop_any(&q, &e) && e.id == next_out++);
		CHECK(dq_offer(&q, next_in, 1, next_in, &dl) == DQ_HOLD);
		next_in++;
	}
	CHECK(dq_len(&q) == 8);
	dq_free(&q);
}

static void test_pop_due(void)
{
	struct dq q;
	struct dq_entry e;
	uint64_t dl[100];

	init_or_die(&q, 128, 20 * MS, 3 * MS, 0.0, 77);
	for (uint32_t i = 0; i < 100; i++)
		CHECK(dq_offer(&q, i, i, 1000 * MS + i * 50 * US, &dl[i]) ==
		      DQ_HOLD);
	CHECK(!dq_pop_due(&q, dl[0] - 1, &e));
	CHECK(dq_len(&q) == 100);

	/* at each packet's deadline, exactly the packets due by then pop */
	uint32_t popped = 0;
	for (uint32_t i = 0; i < 100; i++) {
		while (dq_pop_due(&q, dl[i], &e)) {
			CHECK(e.id == popped && e.deadline_ns <= dl[i]);
			popped++;
		}
		CHECK(popped > i);
		CHECK(popped == 100 || dq_next_deadline(&q) > dl[i]);
	}
	CHECK(popped == 100 && dq_len(&q) == 0);
	CHECK(dq_next_deadline(&q) == UINT64_MAX);
	dq_free(&q);
}

static void test_cold_releases_come_early(void)
{
	/* off: always now */
	CHECK(dq_due_until(10 * MS, 0, 1 * MS, 0) == 10 * MS);
	/* never a verdict yet, or none for longer than the gap: early */
	CHECK(dq_due_until(10 * MS, 0, 1 * MS, 30 * US) == 10 * MS + 30 * US);
	CHECK(dq_due_until(10 * MS, 8 * MS, 1 * MS, 30 * US) == 10 * MS + 30 * US);
	/* a verdict within the gap: warm, on time */
	CHECK(dq_due_until(10 * MS, 9 * MS, 1 * MS, 30 * US) == 10 * MS);
	CHECK(dq_due_until(10 * MS, 9 * MS + 500 * US, 1 * MS, 30 * US) == 10 * MS);

	/* with the queue: a head due 20 us from now leaves now only when cold */
	struct dq q;
	uint64_t dl;
	struct dq_entry e;
	init_or_die(&q, 8, 5 * MS, 0, 0, 1);
	CHECK(dq_offer(&q, 1, 60, 5 * MS + 20 * US, &dl) == DQ_HOLD);
	CHECK(!dq_pop_due(&q, dq_due_until(10 * MS, 9 * MS + 900 * US, 1 * MS, 30 * US), &e));
	CHECK(dq_pop_due(&q, dq_due_until(10 * MS, 8 * MS, 1 * MS, 30 * US), &e) && e.id == 1);
	dq_free(&q);
}

static void test_hist_bucket(void)
{
	CHECK(pb_hist_bucket(0) == 0);
	CHECK(pb_hist_bucket(999) == 999);
	CHECK(pb_hist_bucket(1000) == 1000);
	CHECK(pb_hist_bucket(1099) == 1000);
	CHECK(pb_hist_bucket(1100) == 1001);
	CHECK(pb_hist_bucket(100899) == 1998);
	CHECK(pb_hist_bucket(100900) == 1999);
	CHECK(pb_hist_bucket(UINT64_MAX) == PB_HIST_BUCKETS - 1);
}

int main(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {
		{"init_validation", test_init_validation},
		{"exact_delay", test_exact_delay},
		{"jitter_bounds_and_order", test_jitter_bounds_and_order},
		{"jitter_clamp", test_jitter_clamp},
		{"loss_rate", test_loss_rate},
		{"determinism", test_determinism},
		{"full", test_full},
		{"pop_due", test_pop_due},
		{"hist_bucket", test_hist_bucket},
		{"cold_releases_come_early", test_cold_releases_come_early},
	};
	int passed = 0, failed = 0;

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		failures_in_test = 0;
		tests[i].fn();
		printf("%s %s\n", failures_in_test ? "FAIL" : "ok  ",
		       tests[i].name);
		if (failures_in_test)
			failed++;
		else
			passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
