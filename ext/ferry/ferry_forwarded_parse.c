/*
 * One Forwarded field line (RFC 7239) read as the front's parseForwarded() reads it
 * (internal/gateway/forwarded.go): which lines are believed decides whose client PHP sees,
 * so the grammar's tolerances (empty elements and pairs, unquoted [v6]:port) and refusals
 * are the front's, one for one.
 */
#include <string.h>

#include "ferry_forwarded_int.h"

/* fwdValue.bytes(): the value with its escapes resolved, in buf when it had any; NULL when it does not fit. */
const char *ferry_fwd_unescape(const fwd_value *v, char *buf, size_t cap, size_t *len)
{
	if (!v->escaped) {
		*len = v->n;
		return v->p;
	}
	size_t o = 0;
	for (size_t i = 0; i < v->n; i++) {
		if (v->p[i] == '\\' && i + 1 < v->n) {
			i++;
		}
		if (o == cap) {
			return NULL;
		}
		buf[o++] = v->p[i];
	}
	*len = o;
	return buf;
}

static bool tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		|| (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static bool fwd_control(unsigned char c)
{
	return (c < ' ' && c != '\t') || c == 0x7f;
}

static void skip_ows(const char **p, const char *end)
{
	while (*p < end && (**p == ' ' || **p == '\t')) {
		(*p)++;
	}
}

static void ring_push(fwd_ring *r, const fwd_elem *e)
{
	r->e[r->n % FWD_RING] = *e;
	r->n++;
}

/* parseForwarded: RFC 7239's grammar with empty elements and pairs allowed; false for a line not to believe. */
bool ferry_fwd_parse_line(fwd_ring *r, const char *p, size_t len)
{
	const char *end = p + len;
	fwd_elem cur;
	memset(&cur, 0, sizeof(cur));
	int pairs = 0;
	r->n = 0;
	for (;;) {
		skip_ows(&p, end);
		if (p == end) {
			break;
		}
		if (*p == ',') {
			if (pairs > 0) {
				ring_push(r, &cur);
			}
			memset(&cur, 0, sizeof(cur));
			pairs = 0;
			p++;
			continue;
		}
		if (*p == ';') {
			p++;
			continue;
		}
		const char *name = p;
		while (p < end && tchar((unsigned char) *p)) {
			p++;
		}
		size_t name_len = (size_t) (p - name);
		if (name_len == 0) {
			return false;
		}
		skip_ows(&p, end);
		if (p == end || *p != '=') {
			return false;
		}
		p++;
		skip_ows(&p, end);
		fwd_value val = {NULL, 0, false};
		if (p < end && *p == '"') {
			const char *q = ++p;
			bool closed = false;
			for (; q < end; q++) {
				unsigned char c = (unsigned char) *q;
				if (c == '"') {
					closed = true;
					break;
				}
				if (c == '\\' && q + 1 < end) {
					q++;
					val.escaped = true;
					if (fwd_control((unsigned char) *q)) {
						return false;
					}
				} else if (fwd_control(c)) {
					return false;
				}
			}
			if (!closed) {
				return false;
			}
			val.p = p;
			val.n = (size_t) (q - p);
			p = q + 1;
		} else {
			const char *stop = p;
			while (stop < end && *stop != ';' && *stop != ',') {
				stop++;
			}
			/* Not strictly a token: proxies write for=[v6]:port unquoted. */
			size_t n = (size_t) (stop - p);
			while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) {
				n--;
			}
			if (n == 0) {
				return false;
			}
			for (size_t i = 0; i < n; i++) {
				unsigned char c = (unsigned char) p[i];
				if (c <= ' ' || c == 0x7f || c == '"') {
					return false;
				}
			}
			val.p = p;
			val.n = n;
			p = stop;
		}
		if (ferry_fwd_equal_fold(name, name_len, "for")) {
			cur.node = val;
		} else if (ferry_fwd_equal_fold(name, name_len, "proto")) {
			cur.proto = val;
		} else if (ferry_fwd_equal_fold(name, name_len, "host")) {
			cur.host = val;
		}
		pairs++;
		skip_ows(&p, end);
		if (p < end && *p != ';' && *p != ',') {
			return false;
		}
	}
	if (pairs > 0) {
		ring_push(r, &cur);
	}
	return true;
}

