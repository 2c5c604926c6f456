/*
 * Tests of the pure line (line.c), no root needed: serialization at the
 * rate behind earlier packets, the tail-drop queue in time, where a
 * packet's payload starts, and a V.42bis line charging compressible
 * payloads less than their size and headers in full.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "line.h"


#define MS 1000000ULL

static unsigned char noise_byte(void)
{
	return (unsigned char)(next() >> 32);
}

/* An IPv4 TCP packet (20 + 20 header bytes) with `payload` bytes of text
 * (a table row, repeated) or noise. */
static size_t tcp4(unsigned char *p, size_t payload, int text)
{
	size_t len = 40 + payload;
	memset(p, 0, 40);
	p[0] = 0x45;
	p[2] = (unsigned char)(len >> 8);
	p[3] = (unsigned char)len;
	p[9] = 6;
	p[20 + 12] = 5 << 4;
	for (size_t i = 0; i < payload; i++)
		p[40 + i] = text ? (unsigned char)"<td align=\"right\">4600</td>\n"[i % 28]
				 : noise_byte();
	return len;
}

static void test_serializes_behind_earlier_packets(void)
{
	struct line l;
	unsigned char p[1500];
	uint64_t sent, in, out;
	size_t len = tcp4(p, 1446, 1); /* 1486 + 14 framing = 12000 bits */

	CHECK(line_init(&l, 1000000, 8 * 1514, 0, 0) == 0, "init");
	CHECK(line_offer(&l, p, len, (uint32_t)len, 5 * MS, &sent, &in, &out) &&
	      sent == 17 * MS, "first packet: 12 ms at 1 Mbit/s (%llu)",
	      (unsigned long long)sent);
	CHECK(in == 0 && out == 0, "no V.42bis: nothing compressed");
	CHECK(line_offer(&l, p, 40, (uint32_t)len, 6 * MS, &sent, &in, &out) &&
	      sent == 29 * MS, "second waits for the first (%llu)",
	      (unsigned long long)sent);
	CHECK(line_offer(&l, p, len, (uint32_t)len, 100 * MS, &sent, &in, &out) &&
	      sent == 112 * MS, "an idle line sends at once");
	line_free(&l);
}

static void test_tail_drops_past_the_queue(void)
{
	struct line l;
	unsigned char p[1500];
	uint64_t sent, in, out;
	size_t len = tcp4(p, 1446, 1);
	int accepted = 0;

	/* 3000 bytes of queue at 1 Mbit/s: 24 ms of waiting, two packets */
	CHECK(line_init(&l, 1000000, 3000, 0, 0) == 0, "init");
	for (int i = 0; i < 6; i++)
		accepted += line_offer(&l, p, len, (uint32_t)len, 0, &sent, &in,
				       &out);
	CHECK(accepted == 3, "one on the line, two waiting (%d)", accepted);
	line_free(&l);
}

static void test_payload_offsets(void)
{
	unsigned char p[100] = {0};
	CHECK(line_payload_offset(p, tcp4(p, 10, 1)) == 40, "IPv4 TCP");
	p[20 + 12] = 8 << 4; /* 12 bytes of TCP options */
	CHECK(line_payload_offset(p, 62) == 52, "TCP options are header");
	p[9] = 17;
	CHECK(line_payload_offset(p, 62) == 28, "IPv4 UDP");
	p[9] = 1;
	CHECK(line_payload_offset(p, 62) == 62, "ICMP: all header");
	p[9] = 6;
	p[6] = 0x00, p[7] = 0x10;
	CHECK(line_payload_offset(p, 62) == 62, "a later fragment: all header");
	memset(p, 0, sizeof(p));
	p[0] = 0x60, p[6] = 6, p[40 + 12] = 5 << 4;
	CHECK(line_payload_offset(p, 80) == 60, "IPv6 TCP");
	CHECK(line_payload_offset(p, 10) == 10, "too short: all header");
}

static void test_v42bis_charges_the_compressed_payload(void)
{
	struct line l;
	unsigned char p[1500];
	uint64_t sent, in, out, at = 0, text_ns = 0, noise_ns = 0;

	CHECK(line_init(&l, 1000000, 1 << 20, 2048, 32) == 0, "init");
	for (int i = 0; i < 40; i++) {
		size_t len = tcp4(p, 1446, 1);
		CHECK(line_offer(&l, p, len, (uint32_t)len, at, &sent, &in, &out),
		      "text accepted");
		CHECK(in == 1446, "the payload goes to V.42bis, not the headers");
		text_ns += sent - at;
		at = sent;
	}
	for (int i = 0; i < 40; i++) {
		size_t len = tcp4(p, 1446, 0);
		line_offer(&l, p, len, (uint32_t)len, at, &sent, &in, &out);
		noise_ns += sent - at;
		at = sent;
	}
	/* uncompressed: 40 x 12 ms */
	CHECK(text_ns < 40 * 12 * MS / 3, "repetitive text over 3x faster (%llu ns)",
	      (unsigned long long)text_ns);
	CHECK(noise_ns >= 40 * 12 * MS * 98 / 100 && noise_ns < 40 * 12 * MS * 106 / 100,
	      "noise at its size, within the first packet's compressed-mode cost "
	      "(%llu ns)", (unsigned long long)noise_ns);
	size_t len = tcp4(p, 1446, 1);
	CHECK(line_offer(&l, p, 40, (uint32_t)len, at, &sent, &in, &out) && in == 0 &&
	      sent - at == 12 * MS, "a packet not copied whole is charged whole");
	line_free(&l);
}

int main(void)
{
	test_serializes_behind_earlier_packets();
	test_tail_drops_past_the_queue();
	test_payload_offsets();
	test_v42bis_charges_the_compressed_payload();
	if (failures) {
		fprintf(stderr, "test_line: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_line: ok\n");
	return 0;
}
