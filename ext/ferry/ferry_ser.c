#include "ferry_ser.h"

/* The positions travel as return values, NULL meaning unsupported; only an abort is kept here. */
typedef struct {
	const uint8_t *end;
	const ferry_ser_sink *sink;
	void *ctx;
	ferry_ser_status status;
} reader;

static const uint8_t *aborted(reader *r)
{
	r->status = FERRY_SER_ABORTED;
	return NULL;
}

static const uint8_t *read_array(reader *r, const uint8_t *p, unsigned depth_left);

/* Any one value; an array nests at most depth_left deep. */
FERRY_SER_INLINE const uint8_t *read_value(reader *r, const uint8_t *p, unsigned depth_left)
{
	const uint8_t *next;
	const char *s;
	size_t len;
	int64_t v;
	int b;
	int rc;
	if ((next = ferry_ser_string(p, r->end, &s, &len)) != NULL) {
		rc = r->sink->val_str(r->ctx, s, len);
	} else if ((next = ferry_ser_int(p, r->end, &v)) != NULL) {
		rc = r->sink->val_int(r->ctx, v);
	} else if ((next = ferry_ser_bool(p, r->end, &b)) != NULL) {
		rc = r->sink->val_bool(r->ctx, b);
	} else {
		return read_array(r, p, depth_left);
	}
	return rc ? aborted(r) : next;
}

/* "a:N:{...}"; its elements nest at most depth_left - 1 deeper. */
static const uint8_t *read_array(reader *r, const uint8_t *p, unsigned depth_left)
{
	const uint8_t *end = r->end;
	const ferry_ser_sink *sink = r->sink;
	uint32_t count;
	if (depth_left == 0 || !(p = ferry_ser_array_open(p, end, &count))) {
		return NULL;
	}
	if (sink->array_open(r->ctx, count)) {
		return aborted(r);
	}
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *next;
		const char *s;
		size_t len;
		int64_t v;
		int rc;
		if ((next = ferry_ser_string(p, end, &s, &len)) != NULL) {
			rc = sink->key_str(r->ctx, s, len);
		} else if ((next = ferry_ser_int(p, end, &v)) != NULL) {
			rc = sink->key_int(r->ctx, v);
		} else {
			return NULL;
		}
		if (rc) {
			return aborted(r);
		}
		if (!(p = read_value(r, next, depth_left - 1))) {
			return NULL;
		}
	}
	if (p == end || *p != '}') {
		return NULL;
	}
	return sink->array_close(r->ctx) ? aborted(r) : p + 1;
}

const uint8_t *ferry_ser_value(const uint8_t *p, const uint8_t *end, unsigned max_depth,
	const ferry_ser_sink *sink, void *ctx, ferry_ser_status *status)
{
	reader r = {end, sink, ctx, FERRY_SER_OK};
	p = read_value(&r, p, max_depth);
	*status = p ? FERRY_SER_OK : r.status == FERRY_SER_ABORTED ? FERRY_SER_ABORTED : FERRY_SER_UNSUPPORTED;
	return p;
}

ferry_ser_status ferry_ser_read_array(const uint8_t *buf, size_t len, unsigned max_depth,
	const ferry_ser_sink *sink, void *ctx)
{
	reader r = {buf + len, sink, ctx, FERRY_SER_OK};
	const uint8_t *p = read_array(&r, buf, max_depth);
	if (!p) {
		return r.status == FERRY_SER_ABORTED ? FERRY_SER_ABORTED : FERRY_SER_UNSUPPORTED;
	}
	return p == r.end ? FERRY_SER_OK : FERRY_SER_UNSUPPORTED;
}
