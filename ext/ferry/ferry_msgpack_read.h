/*
 * MessagePack item reader shared by the zval decoder (ferry_msgpack_dec.c) and the
 * fuzz harness: plain C, no Zend API, so the code that reads lengths from the wire can be
 * fuzzed on its own. It reads one item header (and for str/bin/ext checks that the
 * payload is present); containers' elements are the caller's business.
 */
#ifndef FERRY_MSGPACK_READ_H
#define FERRY_MSGPACK_READ_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
	FMP_OK = 0,
	FMP_SHORT,   /* the buffer ends inside the item: it->need, it->what say why */
	FMP_INVALID, /* 0xc1 */
} fmp_status;

typedef enum {
	FMP_NIL, FMP_FALSE, FMP_TRUE,
	FMP_UINT,  /* v.u; any width */
	FMP_INT,   /* v.i; negative fixint and int8..64 */
	FMP_FLOAT, /* v.d; float32 already widened */
	FMP_STR, FMP_BIN, FMP_EXT,
	FMP_ARRAY, FMP_MAP,
} fmp_kind;

typedef struct {
	fmp_kind kind;
	uint8_t code;     /* the type byte */
	int8_t ext_type;
	uint8_t head;     /* header bytes before the payload (str/bin/ext) or elements */
	uint32_t len;     /* payload bytes (str/bin/ext) or element count (array/map) */
	union {
		uint64_t u;
		int64_t i;
		double d;
	} v;
	/* FMP_SHORT: bytes needed from the item's first byte, and what was being read; when
	 * with_len is set the message names the length too ("str8 of 300 bytes"). */
	uint64_t need;
	const char *what;
	int with_len;
} fmp_item;

/* Reads the item at buf[off], off < len. For str/bin/ext the whole payload must fit
 * before FMP_OK is returned; it then starts at off + it->head. */
#if defined(__GNUC__)
__attribute__((visibility("hidden")))
#endif
fmp_status fmp_read(const uint8_t *buf, size_t len, size_t off, fmp_item *it);

#endif
