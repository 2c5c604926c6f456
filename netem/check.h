/* What the delay program's C tests share: a failure counter, CHECK (a failed condition
 * is printed with its place and counted, the test goes on), and a seeded xorshift64 for
 * reproducible random bytes. */
#ifndef PAGEBENCH_CHECK_H
#define PAGEBENCH_CHECK_H

#include <stdint.h>
#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);  \
			fprintf(stderr, __VA_ARGS__);                         \
			fprintf(stderr, "\n");                                \
			failures++;                                           \
		}                                                             \
	} while (0)

static uint64_t rng = 88172645463325252ULL;

static inline uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#endif
