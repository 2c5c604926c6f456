/*
 * Pure receive-window clamp for pagebench-delay: rewrites one TCP packet in
 * place so the peer sees an advertised window of at most `rwnd` bytes.
 *
 * The kernel's own clamps (a route's `window`, TCP_WINDOW_CLAMP) still let
 * the sender see 65535 here, so the router rewrites the receiver's packets
 * instead: the window-scale option of a SYN becomes three NOPs (so no
 * window is ever scaled and the 16-bit field is the whole window), and the
 * window field becomes min(field, rwnd). The TCP checksum is updated
 * incrementally (RFC 1624): the kernel hands NFQUEUE complete checksums and
 * trusts none of a mangled packet, so it must stay exact.
 *
 * No I/O; a test drives it with hand-made packets.
 */
#ifndef PB_RWND_H
#define PB_RWND_H

#include <stddef.h>
#include <stdint.h>

enum rwnd_change {
	RWND_CLAMPED = 1,         /* the window field was lowered to rwnd */
	RWND_WSCALE_STRIPPED = 2, /* a SYN's window-scale option became NOPs */
};

/* Rewrite the IPv4 or IPv6 packet `pkt` of `len` bytes (from its IP header).
 * Returns a mask of enum rwnd_change, 0 if nothing changed. Left alone: not
 * TCP, IPv6 with extension headers, non-first fragments, and anything
 * truncated or malformed. */
unsigned rwnd_rewrite(unsigned char *pkt, size_t len, uint16_t rwnd);

#endif
