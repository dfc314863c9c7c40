/*
 * libFuzzer target for the MessagePack item reader (ferry_msgpack_read.c), the code of the
 * C codec that reads lengths from the wire. Input: 1 byte picking a cut point, then the
 * bytes, walked value by value the way the decoder does (containers element by element,
 * counts checked against the bytes left, 64 levels at most). Checks, beyond ASan/UBSan:
 *  - an item and its payload never extend past the input; "short" always means it would;
 *  - 0xc1 is the only invalid byte;
 *  - any prefix of a complete value is short, never invalid or complete;
 *  - Tarantool's datetime and interval readers (ferry_msgpack_tnt.c), run on every ext
 *    payload of type 4 or 6 and on the whole input, accept only in-range fields, and what
 *    they accept writes back to a payload that reads back the same (a datetime byte for byte).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ferry_msgpack_read.h"
#include "../ferry_msgpack_tnt.h"

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); abort(); } } while (0)
#define MAX_DEPTH 64

typedef enum { W_OK, W_SHORT, W_INVALID, W_DEEP } walk_result;

static void check_datetime(const uint8_t *p, uint32_t n)
{
	fmp_datetime d;
	if (!fmp_datetime_read(p, n, &d)) {
		return;
	}
	CHECK(n == 8 || n == 16);
	CHECK(d.seconds >= FMP_DT_MIN_SECONDS && d.seconds <= FMP_DT_MAX_SECONDS);
	CHECK(d.nsec >= 0 && d.nsec <= FMP_DT_MAX_NSEC);
	CHECK(d.tzoffset >= FMP_DT_MIN_TZOFFSET && d.tzoffset <= FMP_DT_MAX_TZOFFSET);
	CHECK(d.tzindex >= 0 && d.tzindex <= FMP_DT_MAX_TZINDEX);
	uint8_t out[16];
	uint32_t w = fmp_datetime_write(&d, out);
	CHECK(w == 8 || w == 16);
	fmp_datetime back;
	CHECK(fmp_datetime_read(out, w, &back));
	CHECK(memcmp(&back, &d, sizeof d) == 0);
	/* a 16-byte payload with a zero tail is the one input written shorter */
	int zero_tail = d.nsec == 0 && d.tzoffset == 0 && d.tzindex == 0;
	CHECK(w == (zero_tail ? 8u : 16u));
	CHECK(memcmp(out, p, w) == 0);
}

static void check_interval(const uint8_t *p, uint32_t n)
{
	fmp_interval iv;
	if (!fmp_interval_read(p, n, &iv)) {
		return;
	}
	CHECK(n >= 1);
	for (int id = 0; id < FMP_IV_FIELDS; id++) {
		int64_t v = iv.f[id];
		if (id <= 2 || id == 7) {
			CHECK(v >= INT32_MIN && v <= INT32_MAX);
		}
		if (id == FMP_IV_ADJUST) {
			CHECK(v >= 0 && v <= 2);
		}
	}
	uint8_t out[FMP_IV_MAX_PAYLOAD];
	uint32_t w = fmp_interval_write(&iv, out);
	CHECK(w >= 1 && w <= FMP_IV_MAX_PAYLOAD);
	/* written minimally: never longer than what was read */
	CHECK(w <= n);
	fmp_interval back;
	CHECK(fmp_interval_read(out, w, &back));
	CHECK(memcmp(&back, &iv, sizeof iv) == 0);
}

static walk_result walk(const uint8_t *buf, size_t len, size_t *off, int depth, uint64_t *digest)
{
	if (*off >= len) {
		return W_SHORT;
	}
	fmp_item it;
	fmp_status st = fmp_read(buf, len, *off, &it);
	if (st == FMP_SHORT) {
		CHECK(it.what != NULL);
		CHECK(it.need >= 1);
		CHECK(*off + it.need > len);
		return W_SHORT;
	}
	if (st == FMP_INVALID) {
		CHECK(buf[*off] == 0xc1);
		return W_INVALID;
	}
	CHECK(st == FMP_OK);
	CHECK(buf[*off] != 0xc1);
	CHECK(it.head >= 1 && it.head <= 9);
	CHECK(it.head <= len - *off);
	size_t end = *off + it.head;
	*digest = *digest * 31 + it.kind;
	if (it.kind == FMP_STR || it.kind == FMP_BIN || it.kind == FMP_EXT) {
		CHECK(it.len <= len - end);
		/* touch the payload's ends: ASan reports any byte outside the input */
		if (it.len > 0) {
			*digest += buf[end] + buf[end + it.len - 1];
		}
		if (it.kind == FMP_EXT && it.ext_type == 4) {
			check_datetime(buf + end, it.len);
		} else if (it.kind == FMP_EXT && it.ext_type == 6) {
			check_interval(buf + end, it.len);
		}
		end += it.len;
	}
	*off = end;
	if (it.kind == FMP_ARRAY || it.kind == FMP_MAP) {
		uint64_t count = it.kind == FMP_MAP ? (uint64_t) it.len * 2 : it.len;
		if (count > len - *off) {
			return W_SHORT;
		}
		if (count > 0 && depth >= MAX_DEPTH) {
			return W_DEEP;
		}
		for (uint64_t i = 0; i < count; i++) {
			walk_result r = walk(buf, len, off, depth + 1, digest);
			if (r != W_OK) {
				return r;
			}
		}
	}
	return W_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1) {
		return 0;
	}
	size_t len = size - 1;
	/* Exactly-sized heap copies, so reading one byte past the end is an ASan report. */
	uint8_t *whole = malloc(len ? len : 1);
	memcpy(whole, data + 1, len);
	if (len <= UINT32_MAX) {
		check_datetime(whole, (uint32_t) len);
		check_interval(whole, (uint32_t) len);
	}
	size_t off = 0;
	uint64_t digest = 0;
	walk_result first = walk(whole, len, &off, 0, &digest);
	size_t first_end = off;
	CHECK(first_end <= len);
	/* the rest of the stream, value by value */
	for (size_t pos = off; first == W_OK && pos < len;) {
		size_t before = pos;
		if (walk(whole, len, &pos, 0, &digest) != W_OK) {
			break;
		}
		CHECK(pos > before && pos <= len);
	}
	if (first == W_OK && first_end > 0) {
		size_t cut = data[0] % first_end;
		uint8_t *prefix = malloc(cut ? cut : 1);
		memcpy(prefix, data + 1, cut);
		size_t p = 0;
		uint64_t d2 = 0;
		CHECK(walk(prefix, cut, &p, 0, &d2) == W_SHORT);
		free(prefix);
	}
	free(whole);
	return 0;
}
