#include "rwnd.h"

#define PROTO_TCP 6
#define TCP_FLAGS_AT 13
#define TCP_WINDOW_AT 14
#define TCP_CSUM_AT 16
#define TCP_SYN 0x02
#define OPT_EOL 0
#define OPT_NOP 1
#define OPT_WSCALE 3

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), one's complement sums. */
static uint16_t csum_update(uint16_t hc, uint16_t old, uint16_t new)
{
	uint32_t sum = (uint32_t)(uint16_t)~hc + (uint16_t)~old + new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Change the 16-bit word at even offset `at` of the segment `tcp` (the
 * checksum's words are aligned to the segment's start). */
static void set_word(unsigned char *tcp, size_t at, uint16_t v)
{
	uint16_t old = get16(tcp + at);
	put16(tcp + at, v);
	put16(tcp + TCP_CSUM_AT, csum_update(get16(tcp + TCP_CSUM_AT), old, v));
}

static void set_byte(unsigned char *tcp, size_t at, unsigned char v)
{
	size_t w = at & ~(size_t)1;
	unsigned char word[2] = {tcp[w], tcp[w + 1]};
	word[at - w] = v;
	set_word(tcp, w, get16(word));
}

/* The TCP segment of an IP packet, or NULL; *seg_len is its length. */
static unsigned char *tcp_segment(unsigned char *pkt, size_t len,
				  size_t *seg_len)
{
	size_t hdr, total;

	if (len >= 20 && pkt[0] >> 4 == 4) {
		hdr = (size_t)(pkt[0] & 0x0f) * 4;
		total = get16(pkt + 2);
		/* a non-first fragment carries no TCP header */
		if (hdr < 20 || pkt[9] != PROTO_TCP || (get16(pkt + 6) & 0x1fff))
			return NULL;
	} else if (len >= 40 && pkt[0] >> 4 == 6) {
		hdr = 40;
		total = 40 + (size_t)get16(pkt + 4);
		if (pkt[6] != PROTO_TCP) /* includes any extension header */
			return NULL;
	} else {
		return NULL;
	}
	if (total > len || total < hdr + 20)
		return NULL;
	*seg_len = total - hdr;
	return pkt + hdr;
}

/* Replace every window-scale option by NOPs; stop at the first malformed
 * option (the kernel's parser would not read past it either). */
static unsigned strip_wscale(unsigned char *tcp, size_t doff)
{
	unsigned changed = 0;

	for (size_t i = 20; i < doff;) {
		if (tcp[i] == OPT_EOL)
			break;
		if (tcp[i] == OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= doff || tcp[i + 1] < 2 || i + tcp[i + 1] > doff)
			break;
		if (tcp[i] == OPT_WSCALE && tcp[i + 1] == 3) {
			for (size_t k = i; k < i + 3; k++)
				set_byte(tcp, k, OPT_NOP);
			changed |= RWND_WSCALE_STRIPPED;
		}
		i += tcp[i + 1];
	}
	return changed;
}

unsigned rwnd_rewrite(unsigned char *pkt, size_t len, uint16_t rwnd)
{
	size_t seg_len;
	unsigned char *tcp = tcp_segment(pkt, len, &seg_len);
	unsigned changed = 0;

	if (!tcp)
		return 0;
	size_t doff = (size_t)(tcp[12] >> 4) * 4;
	if (doff < 20 || doff > seg_len)
		return 0;
	if (tcp[TCP_FLAGS_AT] & TCP_SYN)
		changed |= strip_wscale(tcp, doff);
	if (get16(tcp + TCP_WINDOW_AT) > rwnd) {
		set_word(tcp, TCP_WINDOW_AT, rwnd);
		changed |= RWND_CLAMPED;
	}
	return changed;
}
