#include "line.h"

#include <errno.h>

#define NSEC_PER_SEC 1000000000ULL

int line_init(struct line *l, uint64_t rate_bps, uint64_t queue_bytes,
	      unsigned n2, unsigned n7)
{
	*l = (struct line){.rate_bps = rate_bps};
	if (!rate_bps) {
		errno = EINVAL;
		return -1;
	}
	l->queue_ns = (uint64_t)((unsigned __int128)queue_bytes * 8 *
				 NSEC_PER_SEC / rate_bps);
	if (n2) {
		if (v42_init(&l->v42, n2, n7) < 0)
			return -1;
		l->v42_on = true;
	}
	return 0;
}

void line_free(struct line *l)
{
	if (l->v42_on)
		v42_free(&l->v42);
	l->v42_on = false;
}

size_t line_payload_offset(const unsigned char *p, size_t len)
{
	size_t at;
	unsigned proto;

	if (len >= 20 && p[0] >> 4 == 4) {
		at = (size_t)(p[0] & 0x0f) * 4;
		proto = p[9];
		if (((unsigned)p[6] << 8 | p[7]) & 0x1fff)
			return len; /* a later fragment */
	} else if (len >= 40 && p[0] >> 4 == 6) {
		at = 40;
		proto = p[6];
	} else {
		return len;
	}
	if (proto == 6 && len >= at + 20)
		at += (size_t)(p[at + 12] >> 4) * 4;
	else if (proto == 17 && len >= at + 8)
		at += 8;
	else
		return len;
	return at < len ? at : len;
}

int line_offer(struct line *l, const unsigned char *p, size_t copied,
	       uint32_t len, uint64_t arrival_ns, uint64_t *sent_ns,
	       uint64_t *in_bytes, uint64_t *out_bits)
{
	uint64_t start = l->free_ns > arrival_ns ? l->free_ns : arrival_ns;
	uint64_t bits = ((uint64_t)len + LINE_FRAMING_BYTES) * 8;

	*in_bytes = *out_bits = 0;
	if (start - arrival_ns > l->queue_ns)
		return 0;
	/* V.42bis needs the whole packet (the queue copies it whole) */
	if (l->v42_on && copied >= len) {
		size_t at = line_payload_offset(p, len);
		*out_bits = v42_packet(&l->v42, p + at, len - at, NULL);
		*in_bytes = len - at;
		bits = ((uint64_t)at + LINE_FRAMING_BYTES) * 8 + *out_bits;
	}
	l->free_ns = start + (uint64_t)(((unsigned __int128)bits * NSEC_PER_SEC +
					 l->rate_bps - 1) / l->rate_bps);
	*sent_ns = l->free_ns;
	return 1;
}
