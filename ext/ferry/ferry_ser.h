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

#endif
