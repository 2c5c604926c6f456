/* Tests of the pure window clamp (rwnd.c) on hand-made IPv4 and IPv6
 * packets. Every checksum after a rewrite is checked against one computed
 * from scratch. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rwnd.h"

static int failures_in_test;

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n",       \
				__FILE__, __LINE__, #cond);                \
			failures_in_test++;                                \
		}                                                          \
	} while (0)

#define SYN 0x02
#define ACK 0x10
#define PSH 0x08

/* What Linux puts in a SYN: MSS, SACK permitted, timestamps, NOP, window
 * scale 7. The window-scale option starts at TCP offset 37 (odd). */
static const unsigned char LINUX_SYN_OPTS[20] = {
	2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x12, 0x34, 0, 0, 0, 0, 1, 3, 3, 7,
};
/* MSS, then window scale at offset 24 (even), NOP. */
static const unsigned char EVEN_WSCALE_OPTS[8] = {2, 4, 0x05, 0xb4, 3, 3, 14, 1};

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static size_t ip_hdr(const unsigned char *pkt)
{
	return pkt[0] >> 4 == 4 ? (size_t)(pkt[0] & 0x0f) * 4 : 40;
}

static size_t seg_len(const unsigned char *pkt)
{
	return pkt[0] >> 4 == 4 ? get16(pkt + 2) - ip_hdr(pkt) : get16(pkt + 4);
}

static uint32_t sum_bytes(uint32_t sum, const unsigned char *p, size_t n,
			  size_t skip)
{
	for (size_t i = 0; i < n; i += 2)
		if (i != skip)
			sum += (uint32_t)p[i] << 8 | (i + 1 < n ? p[i + 1] : 0);
	return sum;
}

/* The TCP checksum from scratch: pseudo-header, then the segment with the
 * checksum field taken as zero. */
static uint16_t tcp_csum(const unsigned char *pkt)
{
	size_t n = seg_len(pkt);
	uint32_t sum = 6 + (uint32_t)(n >> 16) + (uint32_t)(n & 0xffff);

	if (pkt[0] >> 4 == 4)
		sum = sum_bytes(sum, pkt + 12, 8, SIZE_MAX);
	else
		sum = sum_bytes(sum, pkt + 8, 32, SIZE_MAX);
	sum = sum_bytes(sum, pkt + ip_hdr(pkt), n, 16);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint16_t stored_csum(const unsigned char *pkt)
{
	return get16(pkt + ip_hdr(pkt) + 16);
}

static uint16_t window(const unsigned char *pkt)
{
	return get16(pkt + ip_hdr(pkt) + 14);
}

/* A packet client -> server with a correct TCP checksum; returns its length.
 * optlen must be a multiple of 4. */
static size_t build(unsigned char *pkt, int v6, unsigned flags, uint16_t win,
		    const unsigned char *opts, size_t optlen,
		    const unsigned char *data, size_t datalen)
{
	size_t hdr = v6 ? 40 : 20, tcplen = 20 + optlen + datalen;
	unsigned char *tcp = pkt + hdr;

	memset(pkt, 0, hdr + tcplen);
	if (v6) {
		static const unsigned char addrs[32] = {
			0x20, 0x01, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
			0x20, 0x01, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2,
		};
		pkt[0] = 0x60;
		put16(pkt + 4, (uint16_t)tcplen);
		pkt[6] = 6;
		pkt[7] = 64;
		memcpy(pkt + 8, addrs, 32);
	} else {
		static const unsigned char addrs[8] = {198, 18, 0, 2, 198, 18, 1, 2};
		pkt[0] = 0x45;
		put16(pkt + 2, (uint16_t)(hdr + tcplen));
		put16(pkt + 4, 0x1234);
		put16(pkt + 6, 0x4000); /* DF */
		pkt[8] = 64;
		pkt[9] = 6;
		memcpy(pkt + 12, addrs, 8);
	}
	put16(tcp, 40000);
	put16(tcp + 2, 80);
	put16(tcp + 4, 0xa1b2);
	put16(tcp + 6, 0xc3d4);
	put16(tcp + 8, flags & ACK ? 0x0102 : 0);
	put16(tcp + 10, flags & ACK ? 0x0304 : 0);
	tcp[12] = (unsigned char)((20 + optlen) / 4 << 4);
	tcp[13] = (unsigned char)flags;
	put16(tcp + 14, win);
	if (optlen) /* memcpy from NULL is undefined even for 0 bytes */
		memcpy(tcp + 20, opts, optlen);
	if (datalen)
		memcpy(tcp + 20 + optlen, data, datalen);
	put16(tcp + 16, tcp_csum(pkt));
	return hdr + tcplen;
}

static void test_linux_syn_ipv4(void)
{
	unsigned char pkt[128], before[128];
	size_t len = build(pkt, 0, SYN, 64240, LINUX_SYN_OPTS, 20, NULL, 0);
	memcpy(before, pkt, len);

	CHECK(rwnd_rewrite(pkt, len, 32767) ==
	      (RWND_CLAMPED | RWND_WSCALE_STRIPPED));
	CHECK(window(pkt) == 32767);
	CHECK(memcmp(pkt + 20 + 37, "\1\1\1", 3) == 0);
	/* MSS, SACK permitted, timestamps and the NOP before: untouched */
	CHECK(memcmp(pkt + 40, before + 40, 17) == 0);
	CHECK(memcmp(pkt, before, 34) == 0); /* IP header, ports, seq, ack, doff */
	CHECK(stored_csum(pkt) == tcp_csum(pkt));
	CHECK(stored_csum(pkt) != stored_csum(before));
}

static void test_even_wscale_ipv6_syn(void)
{
	unsigned char pkt[128];
	size_t len = build(pkt, 1, SYN, 65535, EVEN_WSCALE_OPTS, 8, NULL, 0);

	CHECK(rwnd_rewrite(pkt, len, 1460) ==
	      (RWND_CLAMPED | RWND_WSCALE_STRIPPED));
	CHECK(window(pkt) == 1460);
	CHECK(memcmp(pkt + 40 + 20, "\2\4\5\264\1\1\1\1", 8) == 0);
	CHECK(stored_csum(pkt) == tcp_csum(pkt));
}

static void test_syn_ack_is_a_syn(void)
{
	unsigned char pkt[128];
	size_t len = build(pkt, 0, SYN | ACK, 100, LINUX_SYN_OPTS, 20, NULL, 0);

	CHECK(rwnd_rewrite(pkt, len, 32767) == RWND_WSCALE_STRIPPED);
	CHECK(window(pkt) == 100);
	CHECK(stored_csum(pkt) == tcp_csum(pkt));
}

static void test_acks_with_data_both_families(void)
{
	/* odd payload length: the checksum pads the last byte */
	static const unsigned char data[5] = {'h', 'e', 'l', 'l', 'o'};
	unsigned char pkt[128];

	for (int v6 = 0; v6 <= 1; v6++) {
		size_t len = build(pkt, v6, ACK | PSH, 65535, NULL, 0, data, 5);
		CHECK(rwnd_rewrite(pkt, len, 32767) == RWND_CLAMPED);
		CHECK(window(pkt) == 32767);
		CHECK(stored_csum(pkt) == tcp_csum(pkt));
		/* idempotent: a second pass changes nothing */
		CHECK(rwnd_rewrite(pkt, len, 32767) == 0);
	}
}

static void test_small_or_equal_windows_are_left_alone(void)
{
	unsigned char pkt[128], before[128];

	for (uint16_t win = 32766; win <= 32767; win++) {
		size_t len = build(pkt, 0, ACK, win, NULL, 0, NULL, 0);
		memcpy(before, pkt, len);
		CHECK(rwnd_rewrite(pkt, len, 32767) == 0);
		CHECK(memcmp(pkt, before, len) == 0);
	}
}

static void test_ack_options_are_never_touched(void)
{
	/* a window-scale option outside a SYN means nothing; leave it */
	unsigned char pkt[128], before[128];
	size_t len = build(pkt, 0, ACK, 1000, EVEN_WSCALE_OPTS, 8, NULL, 0);
	memcpy(before, pkt, len);

	CHECK(rwnd_rewrite(pkt, len, 32767) == 0);
	CHECK(memcmp(pkt, before, len) == 0);
}

static void test_malformed_options_stop_the_walk(void)
{
	/* option length 0 before the window scale: stop there, still clamp */
	static const unsigned char opts[8] = {2, 0, 1, 1, 3, 3, 7, 0};
	unsigned char pkt[128];
	size_t len = build(pkt, 0, SYN, 65535, opts, 8, NULL, 0);

	CHECK(rwnd_rewrite(pkt, len, 32767) == RWND_CLAMPED);
	CHECK(memcmp(pkt + 40, opts, 8) == 0);
	CHECK(stored_csum(pkt) == tcp_csum(pkt));
	/* an option running past the header, or after EOL: no change */
	static const unsigned char past[4] = {1, 1, 3, 3};
	len = build(pkt, 0, SYN, 100, past, 4, NULL, 0);
	CHECK(rwnd_rewrite(pkt, len, 32767) == 0);
	static const unsigned char eol[4] = {0, 3, 3, 7};
	len = build(pkt, 0, SYN, 100, eol, 4, NULL, 0);
	CHECK(rwnd_rewrite(pkt, len, 32767) == 0);
}

static void test_what_is_not_a_whole_tcp_header_is_left_alone(void)
{
	unsigned char pkt[128], before[128];
	size_t len = build(pkt, 0, SYN, 65535, LINUX_SYN_OPTS, 20, NULL, 0);
	memcpy(before, pkt, len);

	CHECK(rwnd_rewrite(pkt, len - 1, 32767) == 0); /* shorter than IP length */
	CHECK(rwnd_rewrite(pkt, 19, 32767) == 0);
	CHECK(rwnd_rewrite(pkt, 0, 32767) == 0);
	pkt[9] = 17; /* UDP */
	CHECK(rwnd_rewrite(pkt, len, 32767) == 0);
	pkt[9] = 6;
	put16(pkt + 6, 0x0010); /* fragment offset 16: no TCP header here */
	CHECK(rwnd_rewrite(pkt, len, 32767) == 0);
	put16(pkt + 6, 0x4000);
	pkt[20 + 12] = 0x40; /* data offset 16 < 20 */
	CHECK(rwnd_rewrite(pkt, len, 32767) == 0);
	pkt[20 + 12] = 0xf0; /* data offset 60 > segment */
	CHECK(rwnd_rewrite(pkt, len, 32767) == 0);
	pkt[20 + 12] = before[20 + 12];
	pkt[0] = 0x44; /* IHL 16 < 20 */
	CHECK(rwnd_rewrite(pkt, len, 32767) == 0);
	pkt[0] = 0x45;
	CHECK(memcmp(pkt, before, len) == 0);

	len = build(pkt, 1, ACK, 65535, NULL, 0, NULL, 0);
	pkt[6] = 0; /* hop-by-hop extension header first */
	CHECK(rwnd_rewrite(pkt, len, 32767) == 0);
	pkt[6] = 6;
	put16(pkt + 4, 19); /* payload too short for a TCP header */
	CHECK(rwnd_rewrite(pkt, len, 32767) == 0);
	pkt[0] = 0x50; /* neither IPv4 nor IPv6 */
	CHECK(rwnd_rewrite(pkt, len, 32767) == 0);
}

/* xorshift64 */
static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_random_packets_keep_exact_checksums(void)
{
	unsigned char pkt[1600], before[1600], opts[40], data[1400];
	int checked = 0;

	for (int n = 0; n < 200000; n++) {
		int v6 = next() & 1;
		unsigned flags = next() & 1 ? SYN : ACK;
		size_t optlen = 4 * (next() % 11), datalen = next() % 1400;
		uint16_t win = (uint16_t)next(), rwnd = (uint16_t)(1 + next() % 65535);
		size_t ws = SIZE_MAX;

		memset(opts, 1, sizeof(opts)); /* NOPs */
		if (optlen >= 4 && next() & 1) { /* a window scale somewhere */
			ws = next() % (optlen - 2);
			opts[ws] = 3;
			opts[ws + 1] = 3;
			opts[ws + 2] = (unsigned char)(next() % 15);
		}
		for (size_t i = 0; i < datalen; i++)
			data[i] = (unsigned char)next();
		size_t len = build(pkt, v6, flags, win, opts, optlen, data, datalen);
		memcpy(before, pkt, len);
		size_t tcp = v6 ? 40 : 20;

		unsigned got = rwnd_rewrite(pkt, len, rwnd);
		unsigned want = (win > rwnd ? RWND_CLAMPED : 0) |
				(flags == SYN && ws != SIZE_MAX ? RWND_WSCALE_STRIPPED : 0);
		CHECK(got == want);
		CHECK(window(pkt) == (win < rwnd ? win : rwnd));
		CHECK(stored_csum(pkt) == tcp_csum(pkt));
		if (got & RWND_WSCALE_STRIPPED)
			CHECK(memcmp(pkt + tcp + 20 + ws, "\1\1\1", 3) == 0);
		/* nothing else moved */
		memcpy(pkt + tcp + 14, before + tcp + 14, 4);
		if (got & RWND_WSCALE_STRIPPED)
			memcpy(pkt + tcp + 20 + ws, before + tcp + 20 + ws, 3);
		CHECK(memcmp(pkt, before, len) == 0);
		checked++;
		if (failures_in_test > 5)
			break;
	}
	CHECK(checked == 200000);
}

int main(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {
		{"linux_syn_ipv4", test_linux_syn_ipv4},
		{"even_wscale_ipv6_syn", test_even_wscale_ipv6_syn},
		{"syn_ack_is_a_syn", test_syn_ack_is_a_syn},
		{"acks_with_data_both_families",
		 test_acks_with_data_both_families},
		{"small_or_equal_windows_are_left_alone",
		 test_small_or_equal_windows_are_left_alone},
		{"ack_options_are_never_touched",
		 test_ack_options_are_never_touched},
		{"malformed_options_stop_the_walk",
		 test_malformed_options_stop_the_walk},
		{"what_is_not_a_whole_tcp_header_is_left_alone",
		 test_what_is_not_a_whole_tcp_header_is_left_alone},
		{"random_packets_keep_exact_checksums",
		 test_random_packets_keep_exact_checksums},
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
