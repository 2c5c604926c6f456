/*
 * Pure line of pagebench-delay (--up/--down-rate-bps): serializes packets at
 * the rate, behind the packets before them, with a tail-drop queue counted
 * in time at the rate; with V.42bis (--v42bis) a packet's transport payload
 * costs what the encoder sends for it (v42bis.c), its headers and framing
 * as they are. No clock reads, no I/O: the caller passes arrival times.
 */
#ifndef PB_LINE_H
#define PB_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "v42bis.h"

/* Per packet on the line beside its IP packet: what htb counts for an
 * Ethernet frame's header, so a line without compression costs what the
 * htb bottleneck does. */
#define LINE_FRAMING_BYTES 14

struct line {
	uint64_t rate_bps;  /* 0: no line */
	uint64_t free_ns;   /* busy until then */
	uint64_t queue_ns;  /* longest wait for the line before a drop */
	bool v42_on;
	struct v42bis v42;
};

/* 0, or -1 with errno (EINVAL: V.42bis parameters; ENOMEM). n2 0: no V.42bis. */
int line_init(struct line *l, uint64_t rate_bps, uint64_t queue_bytes,
	      unsigned n2, unsigned n7);
void line_free(struct line *l);

/* Where the transport payload of an IPv4/IPv6 TCP or UDP packet starts;
 * len (all header) for anything else. */
size_t line_payload_offset(const unsigned char *p, size_t len);

/* A packet of IP length `len` (its first `copied` bytes at p) arriving at
 * `arrival_ns`: returns 0 if the queue is full (drop: it never reaches the
 * modem), else 1 with *sent_ns the time its last bit leaves. `*in_bytes` and
 * `*out_bits` get what V.42bis took and sent for it (0 without). */
int line_offer(struct line *l, const unsigned char *p, size_t copied,
	       uint32_t len, uint64_t arrival_ns, uint64_t *sent_ns,
	       uint64_t *in_bytes, uint64_t *out_bits);

#endif
