/* See ferry_msgpack_read.h. The short-input cases follow php/msgpack's Decoder check by
 * check, because the offsets and reasons in its exceptions are part of the contract. */
#include <string.h>

#include "ferry_msgpack_read.h"

static uint64_t be(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++) {
		v = (v << 8) | p[i];
	}
	return v;
}

static fmp_status shrt(fmp_item *it, uint64_t need, const char *what, int with_len)
{
	it->need = need;
	it->what = what;
	it->with_len = with_len;
	return FMP_SHORT;
}

/* A fixed-size scalar of n bytes after the type byte. */
static fmp_status fixed(const uint8_t *buf, size_t avail, fmp_item *it, int n, const char *what)
{
	if ((size_t) n + 1 > avail) {
		return shrt(it, (uint64_t) n + 1, what, 0);
	}
	it->head = (uint8_t) (n + 1);
	it->v.u = be(buf + 1, n);
	return FMP_OK;
}

/* A payload of it->len bytes after a header of h bytes (type byte included). */
static fmp_status payload(fmp_item *it, size_t avail, int h, const char *what)
{
	it->head = (uint8_t) h;
	if ((uint64_t) h + it->len > avail) {
		return shrt(it, (uint64_t) h + it->len, what, 1);
	}
	return FMP_OK;
}

/* A big-endian length of n bytes after the type byte. */
static fmp_status length(const uint8_t *p, size_t avail, fmp_item *it, int n)
{
	if ((size_t) n + 1 > avail) {
		return shrt(it, (uint64_t) n + 1, "length header", 0);
	}
	it->len = (uint32_t) be(p + 1, n);
	return FMP_OK;
}

fmp_status fmp_read(const uint8_t *buf, size_t len, size_t off, fmp_item *it)
{
	const uint8_t *p = buf + off;
	size_t avail = len - off;
	uint8_t c = p[0];
	fmp_status st;
	it->code = c;
	it->head = 1;
	if (c < 0x80) {
		it->kind = FMP_UINT;
		it->v.u = c;
		return FMP_OK;
	}
	if (c >= 0xe0) {
		it->kind = FMP_INT;
		it->v.i = (int64_t) c - 0x100;
		return FMP_OK;
	}
	if (c < 0x90) {
		it->kind = FMP_MAP;
		it->len = c & 0x0f;
		return FMP_OK;
	}
	if (c < 0xa0) {
		it->kind = FMP_ARRAY;
		it->len = c & 0x0f;
		return FMP_OK;
	}
	if (c < 0xc0) {
		it->kind = FMP_STR;
		it->len = c & 0x1f;
		return payload(it, avail, 1, "fixstr") == FMP_OK ? FMP_OK : shrt(it, 1 + (uint64_t) it->len, "fixstr", 0);
	}
	switch (c) {
	case 0xc0: it->kind = FMP_NIL; return FMP_OK;
	case 0xc2: it->kind = FMP_FALSE; return FMP_OK;
	case 0xc3: it->kind = FMP_TRUE; return FMP_OK;
	case 0xcc: it->kind = FMP_UINT; return fixed(p, avail, it, 1, "uint8");
	case 0xcd: it->kind = FMP_UINT; return fixed(p, avail, it, 2, "uint16");
	case 0xce: it->kind = FMP_UINT; return fixed(p, avail, it, 4, "uint32");
	case 0xcf: it->kind = FMP_UINT; return fixed(p, avail, it, 8, "uint64");
	case 0xd0:
		it->kind = FMP_INT;
		st = fixed(p, avail, it, 1, "int8");
		it->v.i = (int8_t) (uint8_t) it->v.u;
		return st;
	case 0xd1:
		it->kind = FMP_INT;
		st = fixed(p, avail, it, 2, "int16");
		it->v.i = (int16_t) (uint16_t) it->v.u;
		return st;
	case 0xd2:
		it->kind = FMP_INT;
		st = fixed(p, avail, it, 4, "int32");
		it->v.i = (int32_t) (uint32_t) it->v.u;
		return st;
	case 0xd3:
		it->kind = FMP_INT;
		st = fixed(p, avail, it, 8, "int64");
		it->v.i = (int64_t) it->v.u;
		return st;
	case 0xca: {
		it->kind = FMP_FLOAT;
		if ((st = fixed(p, avail, it, 4, "float32")) != FMP_OK) {
			return st;
		}
		uint32_t bits = (uint32_t) it->v.u;
		float f;
		memcpy(&f, &bits, 4);
		it->v.d = (double) f;
		return FMP_OK;
	}
	case 0xcb: {
		it->kind = FMP_FLOAT;
		if ((st = fixed(p, avail, it, 8, "float64")) != FMP_OK) {
			return st;
		}
		uint64_t bits = it->v.u;
		memcpy(&it->v.d, &bits, 8);
		return FMP_OK;
	}
	case 0xd9:
	case 0xc4:
		it->kind = c == 0xd9 ? FMP_STR : FMP_BIN;
		if ((st = length(p, avail, it, 1)) != FMP_OK) {
			return st;
		}
		return payload(it, avail, 2, c == 0xd9 ? "str8" : "bin8");
	case 0xda:
	case 0xc5:
		it->kind = c == 0xda ? FMP_STR : FMP_BIN;
		if ((st = length(p, avail, it, 2)) != FMP_OK) {
			return st;
		}
		return payload(it, avail, 3, c == 0xda ? "str16" : "bin16");
	case 0xdb:
	case 0xc6:
		it->kind = c == 0xdb ? FMP_STR : FMP_BIN;
		if ((st = length(p, avail, it, 4)) != FMP_OK) {
			return st;
		}
		return payload(it, avail, 5, c == 0xdb ? "str32" : "bin32");
	case 0xdc:
	case 0xdd:
	case 0xde:
	case 0xdf: {
		int h = (c == 0xdc || c == 0xde) ? 2 : 4;
		it->kind = c >= 0xde ? FMP_MAP : FMP_ARRAY;
		if ((st = length(p, avail, it, h)) != FMP_OK) {
			return st;
		}
		it->head = (uint8_t) (1 + h);
		return FMP_OK;
	}
	case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
		it->kind = FMP_EXT;
		it->len = 1u << (c - 0xd4);
		if ((st = payload(it, avail, 2, "ext")) != FMP_OK) {
			return st;
		}
		it->ext_type = (int8_t) p[1];
		return FMP_OK;
	case 0xc7:
	case 0xc8:
	case 0xc9: {
		int h = c == 0xc7 ? 1 : (c == 0xc8 ? 2 : 4);
		it->kind = FMP_EXT;
		if ((st = length(p, avail, it, h)) != FMP_OK) {
			return st;
		}
		if ((st = payload(it, avail, 2 + h, "ext")) != FMP_OK) {
			return st;
		}
		it->ext_type = (int8_t) p[1 + h];
		return FMP_OK;
	}
	default:
		return FMP_INVALID;
	}
}
