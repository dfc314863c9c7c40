/*
 * libFuzzer target for direct mode's HTTP parser (ferry_http.c, ferry_http_chunked.c).
 * Input: 1 byte picking the limits and field slots, 1 byte picking a cut, then the bytes,
 * parsed as a request head and, separately, decoded as a chunked body. Checks, beyond what
 * ASan/UBSan catch (each parse gets an exact-size heap copy, so any read past it is caught):
 *  - consumed <= len; NEED_MORE consumes nothing; a status is one ferry_http.h names;
 *  - on OK every pointer lies inside the buffer (path may be the static "/"), field_count
 *    <= field_slots, and the head is exactly consumed bytes: any shorter prefix needs more,
 *    and the same bytes parse the same again;
 *  - chunked: produced <= consumed <= len, and a body fed in two pieces (the first call's
 *    unused bytes carried over, as a connection's buffer carries them) decodes to the same
 *    bytes and the same verdict as the whole.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ferry_http.h"

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); abort(); } } while (0)
#define SLOTS 64

static int known(ferry_http_status s)
{
	switch (s) {
	case FERRY_HTTP_OK: case FERRY_HTTP_NEED_MORE: case FERRY_HTTP_BAD_REQUEST: case FERRY_HTTP_METHOD_NOT_ALLOWED:
	case FERRY_HTTP_PAYLOAD_TOO_LARGE: case FERRY_HTTP_URI_TOO_LONG: case FERRY_HTTP_HEADERS_TOO_LARGE:
	case FERRY_HTTP_NOT_IMPLEMENTED: case FERRY_HTTP_VERSION_NOT_SUPPORTED:
		return 1;
	}
	return 0;
}

static void inside(const char *buf, size_t len, const char *p, size_t n)
{
	if (n == 0 && p == NULL) {
		return;
	}
	CHECK(p >= buf && p <= buf + len && n <= (size_t)(buf + len - p));
	volatile char sink = 0;
	for (size_t i = 0; i < n; i++) {
		sink ^= p[i];
	}
	(void)sink;
}

static ferry_http_status head(const uint8_t *data, size_t len, const ferry_http_limits *lim, size_t slots,
	size_t *consumed, int check)
{
	char *buf = malloc(len ? len : 1); /* exactly len: ASan sees any read past it */
	memcpy(buf, data, len);
	ferry_http_field fields[SLOTS];
	ferry_http_request r = {.fields = fields, .field_slots = slots};
	ferry_http_status s = ferry_http_parse_head(buf, len, lim, &r, consumed);
	CHECK(known(s));
	CHECK(*consumed <= len);
	CHECK(s != FERRY_HTTP_NEED_MORE || *consumed == 0);
	CHECK(s == FERRY_HTTP_OK || s == FERRY_HTTP_NEED_MORE || r.error != NULL);
	if (s == FERRY_HTTP_OK && check) {
		CHECK(*consumed > 0 && r.field_count <= r.field_slots);
		inside(buf, *consumed, r.method, r.method_len);
		inside(buf, *consumed, r.target, r.target_len);
		if (!(r.path_len == 1 && r.path[0] == '/' && (r.path < buf || r.path >= buf + len))) {
			inside(buf, *consumed, r.path, r.path_len);
		}
		inside(buf, *consumed, r.query, r.query_len);
		inside(buf, *consumed, r.host, r.host_len);
		CHECK(r.method_len > 0 && r.target_len > 0 && (r.minor == 0 || r.minor == 1));
		CHECK(r.content_length >= -1 && !(r.chunked && r.content_length != -1));
		for (size_t i = 0; i < r.field_count; i++) {
			inside(buf, *consumed, r.fields[i].name, r.fields[i].name_len);
			inside(buf, *consumed, r.fields[i].value, r.fields[i].value_len);
			CHECK(r.fields[i].name_len > 0);
			CHECK(!memchr(r.fields[i].value, '\n', r.fields[i].value_len) && !memchr(r.fields[i].value, '\r', r.fields[i].value_len));
		}
	}
	free(buf);
	return s;
}

/* Decodes data[0..len) as one chunked body, fed in two pieces cut at `cut`. */
static ferry_http_status chunked(const uint8_t *data, size_t len, size_t cut, uint64_t max_body, char *body,
	size_t *body_len, size_t *used)
{
	ferry_http_chunked c = {.max_trailer = 512};
	char *buf = malloc(len ? len : 1);
	size_t have = cut < len ? cut : len, fed = have, consumed, produced;
	memcpy(buf, data, have);
	*body_len = *used = 0;
	for (;;) {
		ferry_http_status s = ferry_http_chunked_decode(&c, buf, have, max_body, &consumed, &produced);
		CHECK(known(s));
		CHECK(consumed <= have && produced <= consumed);
		memcpy(body + *body_len, buf, produced);
		*body_len += produced, *used += consumed;
		if (s != FERRY_HTTP_NEED_MORE || fed == len) {
			free(buf);
			return s;
		}
		/* the unused bytes stay, the rest arrives */
		memmove(buf, buf + consumed, have - consumed);
		have -= consumed;
		char *grown = malloc(have + (len - fed));
		memcpy(grown, buf, have);
		memcpy(grown + have, data + fed, len - fed);
		free(buf);
		buf = grown, have += len - fed, fed = len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2) {
		return 0;
	}
	uint8_t sel = data[0], cutsel = data[1];
	data += 2, size -= 2;
	static const size_t heads[] = {0, 64, 256, 1024};
	ferry_http_limits lim = {.max_head = heads[sel & 3], .max_headers = (sel >> 2) & 7, .max_body = (sel >> 5) * 16};
	size_t slots = (sel & 0x80) ? SLOTS : 4;

	size_t consumed;
	ferry_http_status s = head(data, size, &lim, slots, &consumed, 1);
	size_t again;
	CHECK(head(data, size, &lim, slots, &again, 0) == s && again == consumed);
	if (s == FERRY_HTTP_OK) {
		size_t k = consumed > 0 ? (size_t)cutsel % consumed : 0, c2;
		CHECK(head(data, k, &lim, slots, &c2, 0) == FERRY_HTTP_NEED_MORE);
		CHECK(head(data, consumed, &lim, slots, &c2, 0) == FERRY_HTTP_OK && c2 == consumed);
	}

	char *whole = malloc(size + 1), *split = malloc(size + 1);
	size_t wlen, slen, wused, sused;
	uint64_t max_body = (sel & 0x40) ? 64 : 0;
	ferry_http_status ws = chunked(data, size, size, max_body, whole, &wlen, &wused);
	ferry_http_status ss = chunked(data, size, (size_t)cutsel * size / 256, max_body, split, &slen, &sused);
	CHECK(ws == ss);
	if (ws == FERRY_HTTP_OK) {
		CHECK(wlen == slen && memcmp(whole, split, wlen) == 0 && wused == sused);
	}
	free(whole);
	free(split);
	return 0;
}
