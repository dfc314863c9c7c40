#include "ferry_ser.h"

typedef struct {
	const uint8_t *p;
	const uint8_t *end;
	unsigned depth_left;
	const ferry_ser_sink *sink;
	void *ctx;
	ferry_ser_status status;
} reader;

static int fail(reader *r, ferry_ser_status status)
{
	if (r->status == FERRY_SER_OK) {
		r->status = status;
	}
	return 0;
}

static int expect(reader *r, char c)
{
	if (r->p >= r->end || *r->p != (uint8_t) c) {
		return fail(r, FERRY_SER_UNSUPPORTED);
	}
	r->p++;
	return 1;
}

/* 1 to 18 digits without a leading zero: never overflows, and reads as unserialize() does. */
static int read_digits(reader *r, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0;
	while (r->p < r->end && *r->p >= '0' && *r->p <= '9') {
		if (n == 18 || (n == 1 && v == 0)) {
			return fail(r, FERRY_SER_UNSUPPORTED);
		}
		v = v * 10 + (uint64_t) (*r->p - '0');
		r->p++;
		n++;
	}
	if (n == 0) {
		return fail(r, FERRY_SER_UNSUPPORTED);
	}
	*out = v;
	return 1;
}

/* "s:N:\"...\";" with r->p after "s:"; the bytes are left in *s, *len. */
static int read_string(reader *r, const char **s, size_t *len)
{
	uint64_t n;
	if (!read_digits(r, &n) || !expect(r, ':') || !expect(r, '"')) {
		return 0;
	}
	/* n + 2: the closing quote and semicolon must fit too */
	if (n > (uint64_t) (r->end - r->p) || (uint64_t) (r->end - r->p) - n < 2) {
		return fail(r, FERRY_SER_UNSUPPORTED);
	}
	*s = (const char *) r->p;
	*len = (size_t) n;
	r->p += n;
	return expect(r, '"') && expect(r, ';');
}

/* "i:[-]N;" with r->p after "i:". */
static int read_int(reader *r, int64_t *v)
{
	int negative = 0;
	uint64_t n;
	if (r->p < r->end && *r->p == '-') {
		negative = 1;
		r->p++;
	}
	if (!read_digits(r, &n) || !expect(r, ';')) {
		return 0;
	}
	if (negative && n == 0) {
		return fail(r, FERRY_SER_UNSUPPORTED);
	}
	*v = negative ? -(int64_t) n : (int64_t) n;
	return 1;
}

static int called(reader *r, int rc)
{
	return rc == 0 ? 1 : fail(r, FERRY_SER_ABORTED);
}

static int read_array_body(reader *r);

/* One value at r->p: its type letter and colon included. */
static int read_value(reader *r)
{
	if (r->end - r->p < 2 || r->p[1] != ':') {
		return fail(r, FERRY_SER_UNSUPPORTED);
	}
	uint8_t type = r->p[0];
	r->p += 2;
	switch (type) {
		case 's': {
			const char *s;
			size_t len;
			return read_string(r, &s, &len) && called(r, r->sink->val_str(r->ctx, s, len));
		}
		case 'i': {
			int64_t v;
			return read_int(r, &v) && called(r, r->sink->val_int(r->ctx, v));
		}
		case 'b': {
			if (r->end - r->p < 2 || (r->p[0] != '0' && r->p[0] != '1') || r->p[1] != ';') {
				return fail(r, FERRY_SER_UNSUPPORTED);
			}
			int v = r->p[0] == '1';
			r->p += 2;
			return called(r, r->sink->val_bool(r->ctx, v));
		}
		case 'a':
			return read_array_body(r);
		default:
			return fail(r, FERRY_SER_UNSUPPORTED);
	}
}

static int read_key(reader *r)
{
	if (r->end - r->p < 2 || r->p[1] != ':') {
		return fail(r, FERRY_SER_UNSUPPORTED);
	}
	uint8_t type = r->p[0];
	r->p += 2;
	if (type == 's') {
		const char *s;
		size_t len;
		return read_string(r, &s, &len) && called(r, r->sink->key_str(r->ctx, s, len));
	}
	if (type == 'i') {
		int64_t v;
		return read_int(r, &v) && called(r, r->sink->key_int(r->ctx, v));
	}
	return fail(r, FERRY_SER_UNSUPPORTED);
}

/* "N:{...}" with r->p after "a:". */
static int read_array_body(reader *r)
{
	uint64_t count;
	if (r->depth_left == 0) {
		return fail(r, FERRY_SER_UNSUPPORTED);
	}
	if (!read_digits(r, &count) || !expect(r, ':') || !expect(r, '{')) {
		return 0;
	}
	/* The shortest element is "i:0;b:0;": a count the bytes cannot hold allocates nothing. */
	if (count > (uint64_t) (r->end - r->p) / 8) {
		return fail(r, FERRY_SER_UNSUPPORTED);
	}
	if (!called(r, r->sink->array_open(r->ctx, (uint32_t) count))) {
		return 0;
	}
	r->depth_left--;
	for (uint64_t i = 0; i < count; i++) {
		if (!read_key(r) || !read_value(r)) {
			return 0;
		}
	}
	r->depth_left++;
	return expect(r, '}') && called(r, r->sink->array_close(r->ctx));
}

ferry_ser_status ferry_ser_read_array(const uint8_t *buf, size_t len, unsigned max_depth,
	const ferry_ser_sink *sink, void *ctx)
{
	reader r = {buf, buf + len, max_depth, sink, ctx, FERRY_SER_OK};
	if (len < 2 || buf[0] != 'a' || buf[1] != ':') {
		return FERRY_SER_UNSUPPORTED;
	}
	r.p += 2;
	if (!read_array_body(&r)) {
		return r.status == FERRY_SER_OK ? FERRY_SER_UNSUPPORTED : r.status;
	}
	return r.p == r.end ? FERRY_SER_OK : FERRY_SER_UNSUPPORTED;
}
