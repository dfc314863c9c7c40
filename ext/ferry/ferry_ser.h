/*
 * Reader for the subset of PHP's serialize() format the gateway writes for a request
 * context (docs/protocol.md, internal/gateway/serialize.go): arrays with string or int
 * keys, strings, ints and bools. Free of any PHP API so the fuzz harness links it alone.
 *
 * Anything outside the subset (objects, floats, null, references, leading zeros, "+",
 * trailing bytes, deeper nesting than max_depth) is FERRY_SER_UNSUPPORTED, not an error:
 * the caller then hands the bytes to unserialize(), which stays the reference for what
 * such input means. Every length is checked against the bytes left before it is used.
 */
#ifndef FERRY_SER_H
#define FERRY_SER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum {
	FERRY_SER_OK = 0,
	FERRY_SER_UNSUPPORTED,
	FERRY_SER_ABORTED /* a sink callback returned non-zero */
} ferry_ser_status;

/* Called in document order; a key call always comes right before its value's call(s). */
typedef struct {
	int (*array_open)(void *ctx, uint32_t count);
	int (*array_close)(void *ctx);
	int (*key_str)(void *ctx, const char *p, size_t len);
	int (*key_int)(void *ctx, int64_t v);
	int (*val_str)(void *ctx, const char *p, size_t len);
	int (*val_int)(void *ctx, int64_t v);
	int (*val_bool)(void *ctx, int v);
} ferry_ser_sink;

/* Reads one array that must span buf[0 .. len) exactly; arrays nest at most max_depth deep. */
ferry_ser_status ferry_ser_read_array(const uint8_t *buf, size_t len, unsigned max_depth,
	const ferry_ser_sink *sink, void *ctx);

/*
 * The same reader one step at a time, for a caller that walks an array itself (the
 * request builder does so for the context's top level: no callback per field). Each
 * reads one item at p, type letter included, and returns the position after it, or NULL
 * when p holds no such item within the subset; the whole input is then unsupported.
 */

/* Any one value, an array nesting at most max_depth deep, through the sink; on NULL,
 * *status is FERRY_SER_ABORTED when a callback stopped it. */
const uint8_t *ferry_ser_value(const uint8_t *p, const uint8_t *end, unsigned max_depth,
	const ferry_ser_sink *sink, void *ctx, ferry_ser_status *status);

/* Small and on every field's path: inlined where they are used. */
#if defined(__GNUC__)
# define FERRY_SER_INLINE static inline __attribute__((always_inline))
#else
# define FERRY_SER_INLINE static inline
#endif

/* Whether p holds the bytes a, b: one compare (memcpy, as p may be unaligned). */
FERRY_SER_INLINE int ferry_ser_pair(const uint8_t *p, char a, char b)
{
	const uint8_t want[2] = {(uint8_t) a, (uint8_t) b};
	uint16_t have, pair;
	memcpy(&have, p, 2);
	memcpy(&pair, want, 2);
	return have == pair;
}

FERRY_SER_INLINE int ferry_ser_is_digit(uint8_t c)
{
	return (unsigned) (c - '0') <= 9;
}

/*
 * 1 to 18 digits, so the value never overflows. A leading zero is the whole number: every
 * caller then requires a delimiter, which rejects "01" as it rejects a 19th digit.
 */
FERRY_SER_INLINE const uint8_t *ferry_ser_digits(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
	/* a number at the very end has no delimiter after it either */
	if (end - p < 2 || !ferry_ser_is_digit(p[0])) {
		return NULL;
	}
	uint64_t v = (uint64_t) (p[0] - '0');
	const uint8_t *stop = end - p > 18 ? p + 18 : end;
	p++;
	if (v != 0) {
		while (p < stop && ferry_ser_is_digit(*p)) {
			v = v * 10 + (uint64_t) (*p++ - '0');
		}
	}
	*out = v;
	return p;
}

/* "s:N:\"...\";"; the bytes are left in *s, *len. */
FERRY_SER_INLINE const uint8_t *ferry_ser_string(const uint8_t *p, const uint8_t *end, const char **s, size_t *len)
{
	uint64_t n;
	if (end - p < 6 || !ferry_ser_pair(p, 's', ':')) {
		return NULL;
	}
	if (ferry_ser_is_digit(p[2]) && ferry_ser_pair(p + 3, ':', '"')) {
		/* a one-digit length, the usual one for keys and short values */
		n = (uint64_t) (p[2] - '0');
		p += 3;
	} else if (!(p = ferry_ser_digits(p + 2, end, &n)) || end - p < 2 || !ferry_ser_pair(p, ':', '"')) {
		return NULL;
	}
	p += 2;
	/* n + 2: the closing '"' and ';' must fit too */
	if (n > (uint64_t) (end - p) || (uint64_t) (end - p) - n < 2 || !ferry_ser_pair(p + n, '"', ';')) {
		return NULL;
	}
	*s = (const char *) p;
	*len = (size_t) n;
	return p + n + 2;
}

/* "i:[-]N;". */
FERRY_SER_INLINE const uint8_t *ferry_ser_int(const uint8_t *p, const uint8_t *end, int64_t *v)
{
	uint64_t n;
	if (end - p < 4 || !ferry_ser_pair(p, 'i', ':')) {
		return NULL;
	}
	int negative = p[2] == '-';
	if (!(p = ferry_ser_digits(p + 2 + negative, end, &n)) || p == end || *p != ';' || (negative && n == 0)) {
		return NULL;
	}
	*v = negative ? -(int64_t) n : (int64_t) n;
	return p + 1;
}

/* "b:0;" or "b:1;". */
FERRY_SER_INLINE const uint8_t *ferry_ser_bool(const uint8_t *p, const uint8_t *end, int *v)
{
	if (end - p < 4 || !ferry_ser_pair(p, 'b', ':') || (p[2] != '0' && p[2] != '1') || p[3] != ';') {
		return NULL;
	}
	*v = p[2] == '1';
	return p + 4;
}

/* "a:N:{", up to the first element; *count is N, which the bytes left can hold. */
FERRY_SER_INLINE const uint8_t *ferry_ser_array_open(const uint8_t *p, const uint8_t *end, uint32_t *count)
{
	uint64_t n;
	if (end - p < 2 || !ferry_ser_pair(p, 'a', ':') || !(p = ferry_ser_digits(p + 2, end, &n))
		|| end - p < 2 || !ferry_ser_pair(p, ':', '{')) {
		return NULL;
	}
	p += 2;
	/* The shortest element is "i:0;b:0;": a count the bytes cannot hold allocates nothing. */
	if (n > (uint64_t) (end - p) / 8 || n > UINT32_MAX) {
		return NULL;
	}
	*count = (uint32_t) n;
	return p;
}

#endif
