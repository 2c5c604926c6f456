#include "v42bis.h"

#include <errno.h>
#include <stdlib.h>

int v42_dict_init(struct v42_dict *d, unsigned n2, unsigned n7)
{
	if (n2 < V42_MIN_N2 || n2 > V42_MAX_N2 || n7 < V42_MIN_N7 ||
	    n7 > V42_MAX_N7) {
		errno = EINVAL;
		return -1;
	}
	d->node = calloc(n2, sizeof(*d->node));
	if (!d->node)
		return -1; /* errno = ENOMEM */
	d->n2 = n2;
	d->n7 = n7;
	d->c1 = V42_N5;
	for (unsigned i = 0; i < n2; i++)
		d->node[i] = (struct v42_node){V42_NONE, V42_NONE, V42_NONE,
					       0, 0, 0};
	for (unsigned ch = 0; ch < 256; ch++) {
		struct v42_node *n = &d->node[V42_ETM + 3 + ch];
		n->depth = 1;
		n->ch = (uint8_t)ch;
		n->used = 1;
	}
	return 0;
}

void v42_dict_free(struct v42_dict *d)
{
	free(d->node);
	d->node = NULL;
}

uint16_t v42_dict_child(const struct v42_dict *d, uint16_t s, uint8_t ch)
{
	for (uint16_t c = d->node[s].first_child; c != V42_NONE;
	     c = d->node[c].next_sibling)
		if (d->node[c].ch == ch)
			return c;
	return V42_NONE;
}

uint16_t v42_dict_peek(const struct v42_dict *d, uint16_t parent)
{
	unsigned c = d->c1;
	for (unsigned tries = V42_N5; tries < d->n2; tries++) {
		const struct v42_node *n = &d->node[c];
		if (!n->used || (n->first_child == V42_NONE && c != parent))
			return (uint16_t)c;
		c = c + 1 == d->n2 ? V42_N5 : c + 1;
	}
	return V42_NONE; /* only `parent` is a leaf: nothing to recycle */
}

static void detach(struct v42_dict *d, uint16_t c)
{
	struct v42_node *p = &d->node[d->node[c].parent];
	if (p->first_child == c) {
		p->first_child = d->node[c].next_sibling;
		return;
	}
	for (uint16_t s = p->first_child; s != V42_NONE;
	     s = d->node[s].next_sibling)
		if (d->node[s].next_sibling == c) {
			d->node[s].next_sibling = d->node[c].next_sibling;
			return;
		}
}

uint16_t v42_dict_add(struct v42_dict *d, uint16_t parent, uint8_t ch)
{
	if (d->node[parent].depth >= d->n7)
		return V42_NONE;
	uint16_t c = v42_dict_peek(d, parent);
	if (c == V42_NONE)
		return V42_NONE;
	if (d->node[c].used)
		detach(d, c); /* a leaf: recycled */
	struct v42_node *p = &d->node[parent];
	d->node[c] = (struct v42_node){parent, V42_NONE, p->first_child,
				       (uint16_t)(p->depth + 1), ch, 1};
	p->first_child = c;
	d->c1 = c + 1u == d->n2 ? V42_N5 : c + 1u;
	return c;
}

uint16_t v42_match(struct v42_dict *d, uint16_t *cur, uint8_t ch)
{
	if (*cur == V42_NONE) {
		*cur = (uint16_t)(3 + ch);
		return V42_NONE;
	}
	if (d->node[*cur].depth < d->n7) {
		uint16_t next = v42_dict_child(d, *cur, ch);
		if (next != V42_NONE) {
			*cur = next;
			return V42_NONE;
		}
	}
	uint16_t ended = *cur;
	v42_dict_add(d, ended, ch);
	*cur = (uint16_t)(3 + ch);
	return ended;
}

void v42_put(struct v42_bits *b, uint32_t value, unsigned bits)
{
	if (b->buf) {
		if ((b->n + bits + 7) / 8 > b->cap) {
			b->overflow = 1;
		} else {
			for (unsigned i = 0; i < bits; i++) {
				uint64_t at = b->n + i;
				uint8_t bit = (uint8_t)(1u << (at % 8));
				if (value >> i & 1)
					b->buf[at / 8] |= bit;
				else
					b->buf[at / 8] &= (uint8_t)~bit;
			}
		}
	}
	b->n += bits;
}

int v42_init(struct v42bis *v, unsigned n2, unsigned n7)
{
	*v = (struct v42bis){.c2 = 9, .c3 = 512, .cur = V42_NONE};
	return v42_dict_init(&v->d, n2, n7);
}

void v42_free(struct v42bis *v)
{
	v42_dict_free(&v->d);
}

static unsigned bit_length(unsigned x)
{
	unsigned n = 0;
	while (x) {
		n++;
		x >>= 1;
	}
	return n;
}

static void put_code(struct v42bis *v, struct v42_bits *b, uint16_t code)
{
	while (code >= v->c3) {
		v42_put(b, V42_STEPUP, v->c2);
		v->c2++;
		v->c3 <<= 1;
	}
	v42_put(b, code, v->c2);
}

static void pad_octet(struct v42_bits *b)
{
	if (b->n % 8)
		v42_put(b, 0, 8 - (unsigned)(b->n % 8));
}

/* Transparent mode: the character as is, the escape character twice. */
static void put_char(struct v42bis *v, struct v42_bits *b, uint8_t ch)
{
	v42_put(b, ch, 8);
	if (ch == v->esc) {
		v42_put(b, V42_EID, 8);
		v->esc = (uint8_t)(v->esc + V42_ESC_STEP);
	}
}

/* The mode test, every V42_TEST_BYTES of input: switch when the other mode
 * would have cost 3 % less over them. Leaving compressed mode sends the
 * string being matched first (no new string: as at a FLUSH); entering it
 * drops the string (both ends). */
static void test_mode(struct v42bis *v, struct v42_bits *b)
{
	if (!v->transparent && v->win_transparent * 100 < v->win_compressed * 97) {
		if (v->cur != V42_NONE) {
			put_code(v, b, v->cur);
			v->cur = V42_NONE;
		}
		v42_put(b, V42_ETM, v->c2);
		pad_octet(b);
		v->transparent = 1;
		v->switches++;
	} else if (v->transparent &&
		   v->win_compressed * 100 < v->win_transparent * 97) {
		v42_put(b, v->esc, 8);
		v42_put(b, V42_ECM, 8);
		v->cur = V42_NONE; /* both ends drop the string being matched */
		v->transparent = 0;
		v->switches++;
	}
	v->win_bytes = v->win_compressed = v->win_transparent = 0;
}

uint64_t v42_packet(struct v42bis *v, const uint8_t *data, size_t len,
		    struct v42_bits *out)
{
	struct v42_bits counter = {0};
	struct v42_bits *b = out ? out : &counter;
	uint64_t start = b->n;

	for (size_t i = 0; i < len; i++) {
		uint8_t ch = data[i];
		v->win_transparent += ch == v->esc ? 16 : 8;
		if (v->transparent)
			put_char(v, b, ch);
		uint16_t ended = v42_match(&v->d, &v->cur, ch);
		if (ended != V42_NONE && v->transparent) {
			unsigned need = bit_length(ended);
			v->win_compressed += need > v->c2 ? need : v->c2;
		} else if (ended != V42_NONE) {
			uint64_t before = b->n;
			put_code(v, b, ended);
			v->win_compressed += b->n - before;
		}
		if (++v->win_bytes >= V42_TEST_BYTES)
			test_mode(v, b);
	}
	if (!v->transparent && v->cur != V42_NONE) {
		uint64_t before = b->n;
		put_code(v, b, v->cur);
		v->cur = V42_NONE;
		v42_put(b, V42_FLUSH, v->c2);
		pad_octet(b);
		v->win_compressed += b->n - before;
	}
	v->in_bytes += len;
	v->out_bits += b->n - start;
	return b->n - start;
}
