/*
 * libFuzzer target for the frame decoder (ferry_frame.c), the code that reads lengths
 * from the wire. Input: 1 byte picking max_payload, 1 byte picking a split point, then
 * the stream. Checks, beyond what ASan/UBSan catch:
 *  - a frame is never reported larger than the bytes given, nor its payload past its end;
 *  - the header re-encodes to the bytes it was read from (reserved byte aside);
 *  - parsing the stream in two chunks gives the same frames and fault as in one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ferry_frame.h"

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); abort(); } } while (0)

typedef struct {
	size_t frames;
	uint64_t digest; /* chained over every frame seen, in order */
	ferry_frame_status last;
} parse_result;

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
	return h;
}

/* One pass of what frames_parse() does, over buf[0 .. len); returns the bytes consumed. */
static size_t parse(const uint8_t *buf, size_t len, uint64_t max, parse_result *r)
{
	size_t pos = 0;
	ferry_frame f;
	for (;;) {
		ferry_frame_status st = ferry_frame_read(buf + pos, len - pos, max, &f);
		r->last = st;
		if (st != FERRY_FRAME_OK) {
			break;
		}
		CHECK(f.size <= len - pos);
		CHECK(f.payload_offset + f.length == f.size);
		CHECK(f.option_count <= FERRY_FRAME_MAX_OPTIONS);
		CHECK(f.length <= max);
		uint8_t head[FERRY_FRAME_MAX_HEADER];
		size_t n = ferry_frame_write_header(head, f.flags, f.options, f.option_count, f.length, f.stream_flags);
		CHECK(n == f.payload_offset);
		head[11] = buf[pos + 11];
		CHECK(memcmp(head, buf + pos, n) == 0);
		r->frames++;
		r->digest = mix(r->digest, f.size);
		r->digest = mix(r->digest, f.flags | (uint64_t) f.stream_flags << 8);
		/* touch the payload: ASan reports any byte outside the input */
		for (uint64_t i = 0; i < f.length; i += 97) {
			r->digest = mix(r->digest, buf[pos + f.payload_offset + i]);
		}
		pos += (size_t) f.size;
	}
	return pos;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t limits[] = {0, 1, 12, 64, 4096, 64u * 1024 * 1024, 0xFFFFFFFFu};
	if (size < 2) {
		return 0;
	}
	uint64_t max = limits[data[0] % (sizeof(limits) / sizeof(limits[0]))];
	size_t split = data[1];
	const uint8_t *stream = data + 2;
	size_t len = size - 2;

	/* Exactly-sized heap copies, so reading one byte past the end is an ASan report. */
	uint8_t *whole = malloc(len ? len : 1);
	memcpy(whole, stream, len);
	parse_result one = {0};
	size_t consumed = parse(whole, len, max, &one);
	CHECK(consumed <= len);

	/* The same stream arriving in two reads, with consumed bytes dropped in between. */
	size_t cut = len ? split % (len + 1) : 0;
	uint8_t *first = malloc(cut ? cut : 1);
	memcpy(first, stream, cut);
	parse_result two = {0};
	size_t consumed_two = parse(first, cut, max, &two);
	if (two.last == FERRY_FRAME_NEED_MORE) {
		size_t rest = len - consumed_two;
		uint8_t *second = malloc(rest ? rest : 1);
		memcpy(second, stream + consumed_two, rest);
		consumed_two += parse(second, rest, max, &two);
		free(second);
		CHECK(consumed_two == consumed);
	}
	/* a fault inside the first chunk is the whole stream's fault too */
	CHECK(two.frames == one.frames);
	CHECK(two.digest == one.digest);
	CHECK(two.last == one.last);
	free(first);
	free(whole);
	return 0;
}
