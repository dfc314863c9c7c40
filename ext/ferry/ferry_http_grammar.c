/*
 * The request-target and Host grammar of internal/gateway/grammar.go, in C for direct mode:
 * the same productions, the same nginx-like extra rules (no NUL and no ".." above the root in
 * the decoded path, no empty label, port <= 65535), so that a target or Host the front refuses
 * is refused here too. grammar.go's comments say why each rule is what it is; keep the two in
 * step (cmd/ferry/direct_verdicts_e2e_test.go compares them).
 */
#include <string.h>

#include "ferry_http_int.h"

static inline int unhex(unsigned char c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* grammar.go's validPath: pct-encoded octets decoded, an escaped '/' separating segments too. */
static bool valid_path(const unsigned char *p, size_t len)
{
	long depth = 0;
	size_t seg = 0, dots = 0;
	for (size_t i = 0; i <= len; i++) {
		unsigned char d = '/'; /* the end closes the last segment */
		if (i < len) {
			unsigned char c = p[i];
			if (c == '%') {
				if (i + 2 >= len || !(ferry_http_uri[p[i + 1]] & FU_HEX) || !(ferry_http_uri[p[i + 2]] & FU_HEX)) {
					return false;
				}
				d = (unsigned char)(unhex(p[i + 1]) << 4 | unhex(p[i + 2]));
				i += 2;
				if (d == 0) {
					return false;
				}
			} else if (c == '/' || (ferry_http_uri[c] & (FU_PCHAR | FU_TOLERATED))) {
				d = c;
			} else {
				return false;
			}
		}
		if (d != '/') {
			seg++;
			dots += d == '.';
			continue;
		}
		if (seg == 2 && dots == 2) {
			if (--depth < 0) {
				return false;
			}
		} else if (seg != 0 && !(seg == 1 && dots == 1)) {
			depth++;
		}
		seg = dots = 0;
	}
	return true;
}

static bool valid_query(const unsigned char *q, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (!(ferry_http_uri[q[i]] & FU_QUERY)) {
			return false;
		}
	}
	return true;
}

/* path [ "?" query ], split at the first '?' */
static bool valid_path_query(const unsigned char *t, size_t len)
{
	const unsigned char *q = memchr(t, '?', len);
	size_t plen = q ? (size_t)(q - t) : len;
	return valid_path(t, plen) && (!q || valid_query(q + 1, len - plen - 1));
}

/* The usual target costs one loop: no escape and no segment starting with a dot means no NUL
 * and no dot-segment (grammar.go's validOrigin). */
static bool valid_origin(const unsigned char *t, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = t[i];
		if ((ferry_http_uri[c] & FU_PATHFAST) || (c == '.' && t[i - 1] != '/')) { /* t[0] is '/' */
			continue;
		}
		if (c == '?') {
			return valid_query(t + i + 1, len - i - 1);
		}
		break;
	}
	return valid_path_query(t, len);
}

static bool valid_port(const unsigned char *p, size_t len)
{
	if (len > 5) {
		while (len > 0 && *p == '0') {
			p++, len--;
		}
	}
	unsigned n = 0;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9') {
			return false;
		}
		if ((n = n * 10 + (p[i] - '0')) > 65535) {
			return false;
		}
	}
	return true;
}

/* Go's netip: dotted quad without leading zeros, the last 4 bytes of an IPv6 address */
static bool valid_v4_tail(const unsigned char *s, size_t len)
{
	unsigned val = 0, digits = 0, pos = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			if (digits == 1 && val == 0) {
				return false;
			}
			val = val * 10 + (s[i] - '0');
			digits++;
			if (val > 255) {
				return false;
			}
		} else if (s[i] == '.') {
			if (i == 0 || i == len - 1 || s[i - 1] == '.' || pos == 3) {
				return false;
			}
			pos++, val = 0, digits = 0;
		} else {
			return false;
		}
	}
	return pos == 3;
}

/* netip.ParseAddr(s) succeeding with an IPv6 address (no zone: '%' never gets here) */
static bool valid_ipv6(const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.') {
			return false; /* ParseAddr reads an IPv4 address */
		}
		if (s[i] == ':') {
			break;
		}
	}
	int ellipsis = -1, i = 0;
	if (len >= 2 && s[0] == ':' && s[1] == ':') {
		ellipsis = 0, s += 2, len -= 2;
		if (len == 0) {
			return true;
		}
	}
	while (i < 16) {
		size_t off = 0;
		for (; off < len && (ferry_http_uri[s[off]] & FU_HEX); off++) {
			if (off > 3) {
				return false;
			}
		}
		if (off == 0) {
			return false;
		}
		if (off < len && s[off] == '.') {
			if ((ellipsis < 0 && i != 12) || i + 4 > 16 || !valid_v4_tail(s, len)) {
				return false;
			}
			len = 0, i += 4;
			break;
		}
		i += 2, s += off, len -= off;
		if (len == 0) {
			break;
		}
		if (s[0] != ':' || len == 1) {
			return false;
		}
		s++, len--;
		if (s[0] == ':') {
			if (ellipsis >= 0) {
				return false;
			}
			ellipsis = i, s++, len--;
			if (len == 0) {
				break;
			}
		}
	}
	if (len != 0) {
		return false;
	}
	return i < 16 ? ellipsis >= 0 : ellipsis < 0;
}

static bool valid_ip_literal(const unsigned char *s, size_t len)
{
	if (len > 0 && (s[0] | 0x20) == 'v') { /* IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ) */
		size_t i = 1;
		while (i < len && (ferry_http_uri[s[i]] & FU_HEX)) {
			i++;
		}
		if (i == 1 || i + 1 >= len || s[i] != '.') {
			return false;
		}
		for (i++; i < len; i++) {
			if (!(ferry_http_uri[s[i]] & FU_REGNAME) && s[i] != ':') {
				return false;
			}
		}
		return true;
	}
	for (size_t i = 0; i < len; i++) {
		if (!(ferry_http_uri[s[i]] & FU_HEX) && s[i] != ':' && s[i] != '.') {
			return false;
		}
	}
	return valid_ipv6(s, len);
}

/* uri-host [ ":" port ]; with need_port, CONNECT's uri-host ":" port (grammar.go's validHostPort) */
bool ferry_http_valid_host(const char *h, size_t len, bool need_port)
{
	const unsigned char *b = (const unsigned char *)h, *port = NULL;
	size_t plen = 0;
	if (len > 0 && b[0] == '[') {
		const unsigned char *end = memchr(b, ']', len);
		if (!end || !valid_ip_literal(b + 1, (size_t)(end - b - 1))) {
			return false;
		}
		size_t rest = len - (size_t)(end - b) - 1;
		if (rest > 0) {
			if (end[1] != ':') {
				return false;
			}
			port = end + 2, plen = rest - 1;
		}
	} else {
		size_t i = 0;
		for (; i < len; i++) {
			if (!((ferry_http_uri[b[i]] & FU_NAMEFAST) || (b[i] == '.' && (i == 0 || b[i - 1] != '.')))) {
				break;
			}
		}
		if (i < len) {
			if (b[i] != ':') {
				return false;
			}
			port = b + i + 1, plen = len - i - 1;
		}
		if (i == 0 || (i == 1 && b[0] == '.')) {
			return false;
		}
	}
	if (need_port && plen == 0) {
		return false;
	}
	return valid_port(port, plen);
}

static bool prefix_fold(const unsigned char *t, size_t len, const char *p, size_t plen)
{
	if (len < plen) {
		return false;
	}
	for (size_t i = 0; i < plen; i++) {
		if ((t[i] | 0x20) != p[i]) { /* p is lower case letters and "://" */
			return false;
		}
	}
	return true;
}

/*
 * grammar.go's parseTarget: the form of target t for the method; for the absolute-form, the
 * authority (which replaces Host) and the rest, path-abempty [ "?" query ].
 */
int ferry_http_target_form(const char *method, size_t mlen, const char *target, size_t tlen,
	const char **authority, size_t *alen, const char **rest, size_t *rlen)
{
	const unsigned char *t = (const unsigned char *)target;
	if (mlen == 7 && memcmp(method, "CONNECT", 7) == 0) {
		return ferry_http_valid_host(target, tlen, true) ? FH_FORM_AUTHORITY : FH_FORM_INVALID;
	}
	if (tlen == 0) {
		return FH_FORM_INVALID;
	}
	if (t[0] == '/') {
		return valid_origin(t, tlen) ? FH_FORM_ORIGIN : FH_FORM_INVALID;
	}
	if (tlen == 1 && t[0] == '*') {
		return mlen == 7 && memcmp(method, "OPTIONS", 7) == 0 ? FH_FORM_ASTERISK : FH_FORM_INVALID;
	}
	size_t skip;
	if (prefix_fold(t, tlen, "http://", 7)) {
		skip = 7;
	} else if (prefix_fold(t, tlen, "https://", 8)) {
		skip = 8;
	} else {
		return FH_FORM_INVALID;
	}
	const unsigned char *a = t + skip;
	size_t n = tlen - skip, end = 0;
	while (end < n && a[end] != '/' && a[end] != '?') {
		end++;
	}
	if (!ferry_http_valid_host((const char *)a, end, false) || !valid_path_query(a + end, n - end)) {
		return FH_FORM_INVALID;
	}
	*authority = (const char *)a, *alen = end;
	*rest = (const char *)a + end, *rlen = n - end;
	return FH_FORM_ABSOLUTE;
}
