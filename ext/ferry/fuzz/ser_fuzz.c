/*
 * libFuzzer target for the request context reader (ferry_ser.c). Input: 1 byte picking
 * max_depth and the callback that aborts (0: none), then the bytes. Checks, beyond what
 * ASan/UBSan catch:
 *  - every string handed to the sink lies inside the input;
 *  - keys and values alternate, arrays open and close in pairs, never deeper than
 *    max_depth, and each closes after exactly the count it announced;
 *  - OK means all of that held to the last byte; an abort is reported as such;
 *  - the step-wise readers, walking the top level as the request builder does
 *    (ferry_ser_php.c), accept exactly what ferry_ser_read_array() accepts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ferry_ser.h"

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); abort(); } } while (0)
#define MAX_DEPTH 16

typedef struct {
	const uint8_t *buf;
	size_t len;
	unsigned max_depth;
	unsigned depth;
	uint64_t announced[MAX_DEPTH + 1];
	uint64_t seen[MAX_DEPTH + 1];
	int want_value;       /* a key was read, its value comes next */
	unsigned calls;
	unsigned abort_at;    /* 1-based callback number that fails, 0 for none */
	int aborted;
} checker;

static int step(checker *c)
{
	c->calls++;
	if (c->abort_at && c->calls == c->abort_at) {
		c->aborted = 1;
		return 1;
	}
	return 0;
}

static void inside(checker *c, const char *p, size_t len)
{
	const uint8_t *s = (const uint8_t *) p;
	CHECK(s >= c->buf && s <= c->buf + c->len);
	CHECK(len <= (size_t) (c->buf + c->len - s));
	/* touch every byte: ASan reports any outside the input */
	volatile uint8_t sink = 0;
	for (size_t i = 0; i < len; i++) {
		sink ^= s[i];
	}
	(void) sink;
}

/* A value (scalar or array) completes one element of the enclosing array. */
static void value_done(checker *c)
{
	if (c->depth > 0) {
		CHECK(c->want_value);
		c->want_value = 0;
		c->seen[c->depth]++;
		CHECK(c->seen[c->depth] <= c->announced[c->depth]);
	}
}

static int on_open(void *ctx, uint32_t count)
{
	checker *c = ctx;
	CHECK(c->depth == 0 || c->want_value);
	CHECK(c->depth < c->max_depth);
	CHECK((uint64_t) count * 8 <= c->len);
	c->want_value = 0;
	c->depth++;
	c->announced[c->depth] = count;
	c->seen[c->depth] = 0;
	return step(c);
}

static int on_close(void *ctx)
{
	checker *c = ctx;
	CHECK(c->depth > 0 && !c->want_value);
	CHECK(c->seen[c->depth] == c->announced[c->depth]);
	c->depth--;
	if (c->depth > 0) {
		c->want_value = 1;
		value_done(c);
	}
	return step(c);
}

static int on_key(checker *c)
{
	CHECK(c->depth > 0 && !c->want_value);
	c->want_value = 1;
	return step(c);
}

static int on_key_str(void *ctx, const char *p, size_t len)
{
	inside(ctx, p, len);
	return on_key(ctx);
}

static int on_key_int(void *ctx, int64_t v)
{
	(void) v;
	return on_key(ctx);
}

static int on_val_str(void *ctx, const char *p, size_t len)
{
	checker *c = ctx;
	inside(c, p, len);
	value_done(c);
	return step(c);
}

static int on_val_int(void *ctx, int64_t v)
{
	checker *c = ctx;
	(void) v;
	value_done(c);
	return step(c);
}

static int on_val_bool(void *ctx, int v)
{
	checker *c = ctx;
	CHECK(v == 0 || v == 1);
	value_done(c);
	return step(c);
}

static const ferry_ser_sink sink = {on_open, on_close, on_key_str, on_key_int, on_val_str, on_val_int, on_val_bool};

/* One step's end: after p, inside the input. */
static const uint8_t *stepped(checker *c, const uint8_t *p, const uint8_t *next)
{
	CHECK(next == NULL || (next > p && next <= c->buf + c->len));
	return next;
}

/*
 * The request builder's walk: keys and scalar values through the inline readers, any
 * other value through ferry_ser_value() (to a checker of its own: each value is a
 * document of its own there). 1 when it reads the whole input.
 */
static int walk(const uint8_t *buf, size_t len, unsigned max_depth)
{
	checker top;
	memset(&top, 0, sizeof(top));
	top.buf = buf;
	top.len = len;
	const uint8_t *p = buf, *end = buf + len;
	uint32_t count;
	if (max_depth == 0 || !(p = stepped(&top, p, ferry_ser_array_open(p, end, &count)))) {
		return 0;
	}
	CHECK((uint64_t) count * 8 <= len);
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *next;
		const char *s;
		size_t n;
		int64_t v;
		int b;
		if ((next = stepped(&top, p, ferry_ser_string(p, end, &s, &n))) != NULL) {
			inside(&top, s, n);
		} else if (!(next = stepped(&top, p, ferry_ser_int(p, end, &v)))) {
			return 0;
		}
		p = next;
		if ((next = stepped(&top, p, ferry_ser_string(p, end, &s, &n))) != NULL) {
			inside(&top, s, n);
		} else if ((next = stepped(&top, p, ferry_ser_bool(p, end, &b))) != NULL) {
			CHECK(b == 0 || b == 1);
		} else {
			checker c;
			ferry_ser_status st;
			memset(&c, 0, sizeof(c));
			c.buf = buf;
			c.len = len;
			c.max_depth = max_depth - 1;
			next = stepped(&top, p, ferry_ser_value(p, end, max_depth - 1, &sink, &c, &st));
			CHECK((next != NULL) == (st == FERRY_SER_OK) && st != FERRY_SER_ABORTED);
			if (!next) {
				return 0;
			}
			CHECK(c.depth == 0 && c.calls > 0);
		}
		p = next;
	}
	return end - p == 1 && *p == '}';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1) {
		return 0;
	}
	checker c;
	memset(&c, 0, sizeof(c));
	c.max_depth = 1 + data[0] % MAX_DEPTH;
	c.abort_at = data[0] >> 4;
	c.len = size - 1;
	/* An exactly-sized heap copy, so reading one byte past the end is an ASan report. */
	uint8_t *buf = malloc(c.len ? c.len : 1);
	memcpy(buf, data + 1, c.len);
	c.buf = buf;
	ferry_ser_status st = ferry_ser_read_array(buf, c.len, c.max_depth, &sink, &c);
	if (st == FERRY_SER_OK) {
		CHECK(!c.aborted && c.depth == 0 && c.calls > 0);
	}
	CHECK((st == FERRY_SER_ABORTED) == (c.aborted != 0));
	if (!c.aborted) {
		CHECK(walk(buf, c.len, c.max_depth) == (st == FERRY_SER_OK));
	}
	free(buf);
	return 0;
}
