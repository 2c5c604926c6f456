/*
 * Tests of the pure V.42bis encoder (v42bis.c), no root needed: a decoder
 * written from the recommendation's rules reads back what the encoder sent
 * (compressed and transparent mode, step-ups, a full dictionary recycling
 * its leaves, the N7 limit), and the sizes it gives text and noise.
 *
 * With file arguments it prints, per file, what the line would carry for it
 * sent in packets of --mss bytes (1448 unless given): the seed 001 files'
 * ratios beside the paper's table 6-3 (docs/benchmarks.md).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "v42bis.h"


/* ---- a decoder --------------------------------------------------------- */

struct reader {
	const uint8_t *buf;
	uint64_t n, at; /* bits */
};

static int get(struct reader *r, unsigned bits, uint32_t *value)
{
	if (r->at + bits > r->n)
		return 0;
	*value = 0;
	for (unsigned i = 0; i < bits; i++, r->at++)
		if (r->buf[r->at / 8] >> (r->at % 8) & 1)
			*value |= 1u << i;
	return 1;
}

static void align(struct reader *r)
{
	r->at = (r->at + 7) / 8 * 8;
}

/* Write string `s` (root first) at out[*len..]. */
static int emit_string(const struct v42_dict *d, uint16_t s, uint8_t *out,
		       size_t *len, size_t cap)
{
	unsigned depth = d->node[s].depth;
	if (*len + depth > cap)
		return 0;
	for (unsigned i = depth; i-- > 0; s = d->node[s].parent)
		out[*len + i] = d->node[s].ch;
	*len += depth;
	return 1;
}

static uint8_t first_char(const struct v42_dict *d, uint16_t s)
{
	while (d->node[s].parent != V42_NONE)
		s = d->node[s].parent;
	return d->node[s].ch;
}

/* Decode a whole stream; returns the bytes decoded, or -1 on an error. */
static long decode(const uint8_t *buf, uint64_t bits, unsigned n2,
		   unsigned n7, uint8_t *out, size_t cap)
{
	struct v42_dict d;
	struct reader r = {buf, bits, 0};
	unsigned c2 = 9;
	uint16_t prev = V42_NONE, tcur = V42_NONE;
	uint8_t esc = 0;
	int transparent = 0;
	size_t len = 0;
	uint32_t code;

	if (v42_dict_init(&d, n2, n7) < 0)
		return -1;
	while (r.at < r.n) {
		if (transparent) {
			uint32_t ch, cmd;
			if (!get(&r, 8, &ch))
				break;
			if (ch == esc) {
				if (!get(&r, 8, &cmd))
					goto bad;
				if (cmd == V42_ECM) {
					transparent = 0;
					tcur = prev = V42_NONE;
					continue;
				}
				if (cmd != V42_EID)
					goto bad;
				esc = (uint8_t)(esc + V42_ESC_STEP);
			}
			if (len == cap)
				goto bad;
			out[len++] = (uint8_t)ch;
			v42_match(&d, &tcur, (uint8_t)ch);
			continue;
		}
		if (!get(&r, c2, &code))
			break; /* the padding of the last flush */
		if (code == V42_STEPUP) {
			c2++;
			continue;
		}
		if (code == V42_FLUSH || code == V42_ETM) {
			align(&r);
			prev = V42_NONE;
			if (code == V42_ETM) {
				transparent = 1;
				tcur = V42_NONE;
			}
			continue;
		}
		if (code >= n2)
			goto bad;
		if (prev != V42_NONE && d.node[prev].depth < n7 &&
		    code == v42_dict_peek(&d, prev)) {
			/* the codeword the encoder made from the string just
			 * sent plus its first character (KwKwK), maybe over a
			 * leaf it recycled: this end adds it one codeword
			 * later */
			if (v42_dict_add(&d, prev, first_char(&d, prev)) != code)
				goto bad;
		} else {
			if (!d.node[code].used)
				goto bad;
			if (prev != V42_NONE && d.node[prev].depth < n7)
				v42_dict_add(&d, prev, first_char(&d, (uint16_t)code));
		}
		if (!emit_string(&d, (uint16_t)code, out, &len, cap))
			goto bad;
		prev = (uint16_t)code;
	}
	v42_dict_free(&d);
	return (long)len;
bad:
	v42_dict_free(&d);
	return -1;
}

/* ---- data -------------------------------------------------------------- */


/* HTML-like text from a small vocabulary: compresses as markup does. */
static void text(uint8_t *p, size_t n)
{
	static const char *const words[] = {
		"<td>", "</td>", "<tr>", "</tr>", "SPECint95", "results",
		"the ", "of ", "and ", "Compaq ", "AlphaServer ", "4.31 ",
		"MHz ", "<a href=\"", "\">", "</a>", "\n", "benchmark "};
	size_t i = 0;
	while (i < n) {
		const char *w = words[next() % (sizeof(words) / sizeof(*words))];
		for (; *w && i < n; w++)
			p[i++] = (uint8_t)*w;
	}
}

static void noise(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(next() >> 32);
}

/* Encode `data` in packets of `mss`, decode, compare; returns the bits. */
static uint64_t round_trip(const char *name, const uint8_t *data, size_t n,
			   size_t mss, unsigned n2, unsigned n7,
			   uint64_t *switches)
{
	struct v42bis v;
	size_t cap = n * 4 + 64;
	uint8_t *buf = calloc(cap, 1), *back = malloc(n + 1);
	struct v42_bits out = {buf, cap, 0, 0};
	uint64_t sum = 0;

	CHECK(v42_init(&v, n2, n7) == 0, "%s: init", name);
	for (size_t at = 0; at < n; at += mss) {
		size_t len = n - at < mss ? n - at : mss;
		sum += v42_packet(&v, data + at, len, &out);
	}
	CHECK(!out.overflow, "%s: output buffer too small", name);
	CHECK(sum == out.n && sum == v.out_bits, "%s: bit counts %llu %llu %llu",
	      name, (unsigned long long)sum, (unsigned long long)out.n,
	      (unsigned long long)v.out_bits);
	long got = decode(buf, out.n, n2, n7, back, n + 1);
	CHECK(got == (long)n, "%s: decoded %ld bytes of %zu", name, got, n);
	if (got == (long)n) {
		size_t i = 0;
		while (i < n && back[i] == data[i])
			i++;
		CHECK(i == n, "%s: decoded bytes differ from byte %zu", name, i);
	}
	if (switches)
		*switches = v.switches;
	v42_free(&v);
	free(buf);
	free(back);
	return sum;
}

static void test_round_trips(void)
{
	size_t n = 400000;
	uint8_t *data = malloc(n);
	uint64_t switches;

	text(data, n);
	/* a full dictionary recycles its leaves; the smallest N7 */
	uint64_t bits = round_trip("text n2=512 n7=6", data, n, 1448, 512, 6,
				   NULL);
	CHECK(bits < n * 8 / 2, "text compresses over 2x: %llu bits of %zu B",
	      (unsigned long long)bits, n);
	round_trip("text n2=2048 n7=32", data, n, 1448, 2048, 32, NULL);
	round_trip("text n2=4096 n7=250", data, n, 536, 4096, 250, NULL);
	round_trip("text, 1-byte packets", data, 3000, 1, 2048, 32, NULL);

	/* noise in the middle: to transparent mode and back */
	noise(data + 100000, 100000);
	bits = round_trip("text noise text", data, n, 1448, 2048, 32, &switches);
	CHECK(switches >= 2, "noise switched to transparent and back (%llu)",
	      (unsigned long long)switches);

	noise(data, n);
	bits = round_trip("noise", data, n, 1448, 2048, 32, &switches);
	CHECK(bits >= n * 8 && bits < n * 8 * 102 / 100,
	      "noise costs its size, within 2 %% (escapes, the first test): "
	      "%llu bits of %zu B", (unsigned long long)bits, n);
	CHECK(switches == 1, "noise: one switch to transparent (%llu)",
	      (unsigned long long)switches);
	free(data);
}

static void test_bad_parameters(void)
{
	struct v42bis v;
	errno = 0;
	CHECK(v42_init(&v, 511, 32) < 0 && errno == EINVAL, "n2 below 512");
	CHECK(v42_init(&v, 2048, 5) < 0 && errno == EINVAL, "n7 below 6");
	CHECK(v42_init(&v, 2048, 251) < 0 && errno == EINVAL, "n7 above 250");
}

static void test_step_up(void)
{
	/* distinct pairs fill codewords past 511: a STEPUP to 10 bits */
	struct v42bis v;
	size_t n = 0;
	uint8_t data[4096];
	for (unsigned twice = 0; twice < 2; twice++)
		for (unsigned a = 0; a < 16; a++)
			for (unsigned b = 0; b < 16; b++) {
				data[n++] = (uint8_t)('A' + a);
				data[n++] = (uint8_t)('a' + b);
			}
	CHECK(v42_init(&v, 2048, 32) == 0, "init");
	v42_packet(&v, data, n, NULL);
	CHECK(v.c2 >= 10, "codeword size stepped up (c2 %u)", v.c2);
	v42_free(&v);
	round_trip("step-up", data, n, n, 2048, 32, NULL);
}

/* ---- files ------------------------------------------------------------- */

static int ratio_of(const char *path, size_t mss)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "test_v42bis: %s: %s\n", path, strerror(errno));
		return 1;
	}
	static uint8_t data[1 << 24];
	size_t n = fread(data, 1, sizeof(data), f);
	fclose(f);
	struct v42bis v;
	if (v42_init(&v, 2048, 32) < 0)
		return 1;
	for (size_t at = 0; at < n; at += mss)
		v42_packet(&v, data + at, n - at < mss ? n - at : mss, NULL);
	printf("%s\t%zu bytes\t%llu bytes on the line\t%.3fx\n", path, n,
	       (unsigned long long)(v.out_bits + 7) / 8,
	       v.out_bits ? (double)n * 8 / (double)v.out_bits : 0.0);
	v42_free(&v);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		int rc = 0;
		size_t mss = 1448;
		for (int i = 1; i < argc; i++) {
			if (!strcmp(argv[i], "--mss") && i + 1 < argc)
				mss = (size_t)atoi(argv[++i]);
			else
				rc |= ratio_of(argv[i], mss ? mss : 1448);
		}
		return rc;
	}
	test_bad_parameters();
	test_step_up();
	test_round_trips();
	if (failures) {
		fprintf(stderr, "test_v42bis: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_v42bis: ok\n");
	return 0;
}
