/*
 * ferry_multipart_boundary(): internal/multipart.Boundary, which is mime.ParseMediaType's
 * "boundary" parameter of a Content-Type starting with multipart/form-data. Everything
 * that makes Go's parse fail (a bad media type, a malformed or duplicate parameter)
 * leaves the body unparsed there, so it must here too; RFC 2231 continuations and
 * encodings (boundary*0=, boundary*=utf-8''...) are read as Go reads them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_multipart.h"
#include "ferry_multipart_int.h"

static bool token_char(unsigned char c)
{
	if (c <= ' ' || c >= 0x7F) {
		return false;
	}
	return strchr("()<>@,;:\\\"/[]?=", c) == NULL;
}

static bool tspecial(unsigned char c)
{
	return c != '\0' && strchr("()<>@,;:\\\"/[]?=", c) != NULL;
}

typedef struct {
	const char *key;
	size_t key_len;
	const char *val; /* decoded (in the scratch buffer) */
	size_t val_len;
} param;

typedef struct {
	param *slots; /* open addressing; key == NULL: free */
	size_t mask;
	char *scratch;
	size_t used;
} params;

static uint64_t key_hash(const char *k, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)k[i];
		h = (h ^ (c >= 'A' && c <= 'Z' ? c + 32 : c)) * 1099511628211ull;
	}
	return h;
}

static bool key_eq(const char *a, size_t an, const char *b, size_t bn)
{
	if (an != bn) {
		return false;
	}
	for (size_t i = 0; i < an; i++) {
		unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
		if ((x >= 'A' && x <= 'Z' ? x + 32 : x) != (y >= 'A' && y <= 'Z' ? y + 32 : y)) {
			return false;
		}
	}
	return true;
}

static param *lookup(params *ps, const char *k, size_t n)
{
	for (size_t i = key_hash(k, n) & ps->mask;; i = (i + 1) & ps->mask) {
		param *p = &ps->slots[i];
		if (p->key == NULL || key_eq(p->key, p->key_len, k, n)) {
			return p;
		}
	}
}

static const char *skip_space(const char *s, const char *end)
{
	size_t n;
	while (s < end && (n = mp_space_at(s, end)) > 0) {
		s += n;
	}
	return s;
}

/* consumeMediaParam: one "; key=value" into ps (its value decoded), *rest after it.
 * false where Go's gives no key. */
static bool media_param(params *ps, const char *v, const char *end, const char **rest, param *out)
{
	const char *r = skip_space(v, end);
	if (r == end || *r != ';') {
		return false;
	}
	r = skip_space(r + 1, end);
	const char *k = r;
	while (r < end && token_char((unsigned char)*r)) {
		r++;
	}
	if (r == k) {
		return false;
	}
	out->key = k, out->key_len = (size_t)(r - k);
	r = skip_space(r, end);
	if (r == end || *r != '=') {
		return false;
	}
	r = skip_space(r + 1, end);
	char *o = ps->scratch + ps->used;
	out->val = o;
	if (r < end && *r != '"') {
		const char *t = r;
		while (r < end && token_char((unsigned char)*r)) {
			r++;
		}
		if (r == t) {
			return false;
		}
		memcpy(o, t, (size_t)(r - t));
		out->val_len = (size_t)(r - t);
	} else if (r < end) {
		size_t n = 0;
		for (r++;; r++) {
			if (r == end || *r == '\r' || *r == '\n') {
				return false;
			}
			if (*r == '"') {
				r++;
				break;
			}
			if (*r == '\\' && r + 1 < end && tspecial((unsigned char)r[1])) {
				r++;
			}
			o[n++] = *r;
		}
		out->val_len = n;
	} else {
		return false;
	}
	ps->used += out->val_len;
	*rest = r;
	return true;
}

/* the boundary as it is built: only its first 71 bytes are kept, enough to refuse it */
typedef struct {
	char *buf;
	size_t len;
} builder;

#define KEEP 71

static void append(builder *b, const char *s, size_t n)
{
	if (b->len < KEEP) {
		memcpy(b->buf + b->len, s, n < KEEP - b->len ? n : KEEP - b->len);
	}
	b->len += n;
}

static int unhex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* percentHexUnescape: false (nothing appended) on a bad escape */
static bool unescape(builder *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && (i + 2 >= n || unhex(s[i + 1]) < 0 || unhex(s[i + 2]) < 0)) {
			return false;
		}
		if (s[i] == '%') {
			i += 2;
		}
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '%') {
			c = (char)(unhex(s[i + 1]) << 4 | unhex(s[i + 2]));
			i += 2;
		}
		append(b, &c, 1);
	}
	return true;
}

/* decode2231Enc: charset'language'value, charset us-ascii or utf-8 */
static bool decode2231(builder *b, const char *s, size_t n)
{
	const char *q1 = memchr(s, '\'', n);
	if (!q1) {
		return false;
	}
	const char *q2 = memchr(q1 + 1, '\'', (size_t)(s + n - q1 - 1));
	if (!q2) {
		return false;
	}
	size_t cl = (size_t)(q1 - s);
	if (!mp_lower_eq(s, cl, "us-ascii") && !mp_lower_eq(s, cl, "utf-8")) {
		return false;
	}
	return unescape(b, q2 + 1, (size_t)(s + n - q2 - 1));
}

static param *find(params *ps, const char *key)
{
	param *p = lookup(ps, key, strlen(key));
	return p->key ? p : NULL;
}

/* The parameters are read, boundary built from them; false where Go's parse fails. */
static bool parse_params(params *ps, const char *v, const char *end, builder *b, bool *found)
{
	bool cont = false;
	while (v < end) {
		v = skip_space(v, end);
		if (v == end) {
			break;
		}
		param p;
		const char *rest;
		size_t mark = ps->used;
		if (!media_param(ps, v, end, &rest, &p)) {
			const char *s = v, *e = end;
			mp_trim_space(&s, &e);
			if (e - s == 1 && *s == ';') {
				break;
			}
			return false;
		}
		param *slot = lookup(ps, p.key, p.key_len);
		if (slot->key) {
			if (slot->val_len != p.val_len || memcmp(slot->val, p.val, p.val_len) != 0) {
				return false; /* errDuplicateParamName */
			}
			ps->used = mark;
		} else {
			*slot = p;
		}
		if (p.key_len >= 9 && key_eq(p.key, 9, "boundary*", 9)) {
			cont = true;
		}
		v = rest;
	}
	param *plain = find(ps, "boundary");
	if (cont) {
		param *single = find(ps, "boundary*");
		if (single) {
			if (decode2231(b, single->val, single->val_len)) {
				*found = true;
				return true;
			}
			b->len = 0;
		} else {
			bool valid = false;
			char key[32];
			for (int n = 0;; n++) {
				snprintf(key, sizeof key, "boundary*%d", n);
				param *simple = find(ps, key);
				if (simple) {
					valid = true;
					append(b, simple->val, simple->val_len);
					continue;
				}
				snprintf(key, sizeof key, "boundary*%d*", n);
				param *enc = find(ps, key);
				if (!enc) {
					break;
				}
				valid = true;
				size_t before = b->len;
				if (!(n == 0 ? decode2231(b, enc->val, enc->val_len) : unescape(b, enc->val, enc->val_len))) {
					b->len = before;
				}
			}
			if (valid) {
				*found = true;
				return true;
			}
		}
	}
	if (plain) {
		append(b, plain->val, plain->val_len);
		*found = true;
	}
	return true;
}

/* checkMediaTypeDisposition on strings.TrimSpace(strings.ToLower(base)) */
static bool media_type(const char *s, const char *e)
{
	mp_trim_space(&s, &e);
	int part = 0;
	size_t run = 0, w;
	for (; s < e; s += w) {
		int c = mp_lower_ascii(s, e, &w);
		if (c == '/' && part == 0 && run > 0) {
			part = 1, run = 0;
		} else if (c >= 0 && token_char((unsigned char)c)) {
			run++;
		} else {
			return false;
		}
	}
	return run > 0;
}

bool ferry_multipart_boundary(const char *ct, size_t len, const char **boundary, size_t *boundary_len)
{
	static char kept[KEEP];
	const char *end = ct + len, *p = ct;
	size_t w;
	for (const char *want = "multipart/form-data"; *want; want++, p += w) {
		if (p == end || mp_lower_ascii(p, end, &w) != *want) {
			return false;
		}
	}
	const char *semi = memchr(ct, ';', len);
	const char *base_end = semi ? semi : end;
	if (!media_type(ct, base_end)) {
		return false;
	}
	/* a parameter each ';' at most: the table is sized to the value, not to its length */
	size_t cap = 1, slots = 8;
	for (const char *q = base_end; q < end; q++) {
		cap += *q == ';';
	}
	while (slots < 2 * cap) {
		slots *= 2;
	}
	params ps = {.slots = calloc(slots, sizeof(param)), .mask = slots - 1, .scratch = malloc(len + 1)};
	builder b = {.buf = kept};
	bool found = false, ok = ps.slots && ps.scratch && parse_params(&ps, base_end, end, &b, &found);
	free(ps.slots);
	free(ps.scratch);
	if (!ok || !found || b.len == 0) {
		return false;
	}
	*boundary = kept;
	*boundary_len = b.len < KEEP ? b.len : KEEP;
	return true;
}
