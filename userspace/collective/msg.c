// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The setup messages of the store protocol and of the data connections
 * (layouts in coll.h), encoded and decoded in one place with every length
 * checked: HELLO and WELCOME (comm.c and store.c), the data hello
 * (comm.c, both ends).
 */
#include "coll.h"

void coll_hello_encode(const struct coll_hello *h,
		       uint8_t out[COLL_HELLO_LEN])
{
	memset(out, 0, COLL_HELLO_LEN);
	coll_put16(out, h->version);
	coll_put32(out + 4, h->rank);
	coll_put32(out + 8, h->world);
	out[12] = h->codec;
	out[13] = h->param;
	coll_sa_encode(&h->addr, out + 16);
}

int coll_hello_decode(const uint8_t *p, size_t len, struct coll_hello *h)
{
	memset(h, 0, sizeof(*h));
	if (len < 16)
		return -EPROTO;
	/* every version starts u16 version, u16 0, u32 rank, u32 world */
	h->version = coll_get16(p);
	h->rank = coll_get32(p + 4);
	h->world = coll_get32(p + 8);
	if (h->version != COLL_PROTO_VERSION)
		return 0;	/* the caller names both versions */
	if (len != COLL_HELLO_LEN)
		return -EPROTO;
	h->codec = p[12];
	h->param = p[13];
	return coll_sa_decode(p + 16, &h->addr);
}

size_t coll_welcome_len(uint32_t world)
{
	return COLL_WELCOME_HDR_LEN + COLL_WELCOME_ADDR_LEN * (size_t)world;
}

void coll_welcome_encode(const struct coll_welcome *w,
			 const union coll_sa *addrs, uint8_t *out)
{
	memset(out, 0, coll_welcome_len(w->world));
	coll_put32(out, w->world);
	coll_put64(out + 8, w->token);
	out[16] = w->codec;
	out[17] = w->param;
	for (uint32_t r = 0; r < w->world; r++)
		coll_sa_encode(&addrs[r], out + COLL_WELCOME_HDR_LEN +
			       COLL_WELCOME_ADDR_LEN * r);
}

int coll_welcome_decode(const uint8_t *p, size_t len, uint32_t world,
			struct coll_welcome *w, union coll_sa *addrs)
{
	if (len != coll_welcome_len(world) || coll_get32(p) != world)
		return -EPROTO;
	w->world = world;
	w->token = coll_get64(p + 8);
	w->codec = p[16];
	w->param = p[17];
	for (uint32_t r = 0; r < world; r++)
		if (coll_sa_decode(p + COLL_WELCOME_HDR_LEN +
				   COLL_WELCOME_ADDR_LEN * r, &addrs[r]))
			return -EPROTO;
	return 0;
}

void coll_data_hello_encode(const struct coll_data_hello *h,
			    uint8_t out[COLL_DATA_HELLO_LEN])
{
	memset(out, 0, COLL_DATA_HELLO_LEN);
	coll_put32(out, COLL_DATA_MAGIC);
	coll_put16(out + 4, COLL_PROTO_VERSION);
	coll_put16(out + 6, h->kind);
	coll_put64(out + 8, h->token);
	coll_put32(out + 16, h->rank);
}

int coll_data_hello_decode(const uint8_t *p, size_t len,
			   struct coll_data_hello *h)
{
	if (len != COLL_DATA_HELLO_LEN || coll_get32(p) != COLL_DATA_MAGIC ||
	    coll_get16(p + 4) != COLL_PROTO_VERSION || coll_get32(p + 20))
		return -EPROTO;
	h->kind = coll_get16(p + 6);
	h->token = coll_get64(p + 8);
	h->rank = coll_get32(p + 16);
	return 0;
}
