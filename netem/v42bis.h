/*
 * Pure V.42bis data compression (ITU-T V.42bis, 1990) for pagebench-delay's
 * modem line: what a compressing modem puts on the wire for each packet.
 *
 * BTLZ: a dictionary of N2 codewords (0..2 control codewords ETM, FLUSH,
 * STEPUP; 3..258 the 256 characters; strings from N5 = 259 up), strings at
 * most N7 characters, codewords of C2 = 9 bits at first, one more after
 * each STEPUP (sent when a codeword does not fit). A matched string plus the
 * character that ends it becomes a new codeword; once the dictionary is
 * full the next leaf (a string no longer string extends) is recycled.
 *
 * Transparent mode: when data does not compress the encoder says ETM and
 * then sends characters as they are (the escape character, initially 0,
 * sent twice as ESC EID, and moved on by 51 each time), still growing the
 * dictionary, and says ESC ECM to go back when codewords would be shorter.
 * The mode is tested every V42_TEST_BYTES of input, with a margin so it
 * does not flap.
 *
 * A packet is one FLUSH: its last string is sent at once and the codeword
 * stream padded to an octet (in compressed mode), as a modem flushes when
 * its input pauses. The dictionary persists across packets (the modems
 * keep theirs for the call).
 *
 * No I/O; the output bits go to a buffer when given one, so a test can
 * decode them (test_v42bis.c holds a decoder).
 */
#ifndef PB_V42BIS_H
#define PB_V42BIS_H

#include <stddef.h>
#include <stdint.h>

#define V42_ETM 0
#define V42_FLUSH 1
#define V42_STEPUP 2
#define V42_N5 259         /* first string codeword */
#define V42_ECM 0          /* transparent-mode commands after ESC */
#define V42_EID 1
#define V42_ESC_STEP 51
#define V42_NONE 0xffffu
#define V42_MIN_N2 512
#define V42_MAX_N2 65535
#define V42_MIN_N7 6
#define V42_MAX_N7 250
#define V42_TEST_BYTES 256 /* input between mode tests */

struct v42_node {
	uint16_t parent, first_child, next_sibling, depth;
	uint8_t ch;
	uint8_t used;
};

struct v42_dict {
	struct v42_node *node; /* N2 entries; 3..258 are the characters */
	unsigned n2, n7;
	unsigned c1; /* next codeword to try for a new string */
};

/* An output sink: counts bits, and stores them when buf != NULL, least
 * significant bit first (as V.42bis sends codewords and octets). */
struct v42_bits {
	uint8_t *buf;
	size_t cap;   /* bytes */
	uint64_t n;   /* bits written */
	int overflow; /* buf too small: counting went on, storing stopped */
};

struct v42bis {
	struct v42_dict d;
	unsigned c2;     /* codeword size, bits */
	unsigned c3;     /* 1 << c2: the first codeword that needs a STEPUP */
	uint16_t cur;    /* the string being matched, V42_NONE if none */
	uint8_t esc;     /* transparent mode's escape character */
	int transparent; /* the mode */
	/* bits each mode would have cost since the last test, and its input */
	uint64_t win_compressed, win_transparent, win_bytes;
	/* totals: input bytes, output bits, mode switches */
	uint64_t in_bytes, out_bits, switches;
};

/* 0, or -1 (errno EINVAL: n2 or n7 out of range; ENOMEM). */
int v42_dict_init(struct v42_dict *d, unsigned n2, unsigned n7);
void v42_dict_free(struct v42_dict *d);
/* The child of string `s` that adds `ch`, or V42_NONE. */
uint16_t v42_dict_child(const struct v42_dict *d, uint16_t s, uint8_t ch);
/* The codeword a new string under `parent` would take (the next unused or
 * leaf entry that is not `parent`), without taking it. */
uint16_t v42_dict_peek(const struct v42_dict *d, uint16_t parent);
/* Add string parent+ch unless that would exceed N7; returns its codeword or
 * V42_NONE. */
uint16_t v42_dict_add(struct v42_dict *d, uint16_t parent, uint8_t ch);
/* One character through the string matcher: extends *cur, or ends it (adds
 * *cur + ch to the dictionary, starts a new string at ch) and returns the
 * codeword of the string that ended; V42_NONE while it goes on. Encoder and
 * decoder (in transparent mode) both run it, so their dictionaries agree. */
uint16_t v42_match(struct v42_dict *d, uint16_t *cur, uint8_t ch);

int v42_init(struct v42bis *v, unsigned n2, unsigned n7);
void v42_free(struct v42bis *v);
/* Compress one packet's bytes, ending with a flush; returns the bits it
 * takes on the line (a mode switch before it included). */
uint64_t v42_packet(struct v42bis *v, const uint8_t *data, size_t len,
		    struct v42_bits *out);

void v42_put(struct v42_bits *b, uint32_t value, unsigned bits);

#endif
