/*
 * Field-level helpers of direct mode's HTTP parser: the name comparisons, the obs-fold
 * handling and the comma lists fasthttp reads in Trailer and Connection.
 */
#include <string.h>

#include "ferry_http_int.h"

bool ferry_http_eq_fold(const char *a, size_t alen, const char *lower, size_t llen)
{
	if (alen != llen) {
		return false;
	}
	for (size_t i = 0; i < alen; i++) {
		if (((unsigned char)a[i] | 0x20) != (unsigned char)lower[i]) {
			return false;
		}
	}
	return true;
}

bool ferry_http_bad_trailer(const char *k, size_t n)
{
	if (n == 0) {
		return true;
	}
	/* fasthttp compares "Content-..." only past 12 bytes and "Proxy-..." only past 16, so that
	 * Content-Type and Proxy-Connection pass: kept, since the front lets them through */
	switch (k[0] | 0x20) {
	case 'a': return ferry_http_eq_fold(k, n, "authorization", 13);
	case 'c':
		if (n > 12 && ferry_http_eq_fold(k, 8, "content-", 8)) {
			return ferry_http_eq_fold(k + 8, n - 8, "encoding", 8) || ferry_http_eq_fold(k + 8, n - 8, "length", 6)
				|| ferry_http_eq_fold(k + 8, n - 8, "type", 4) || ferry_http_eq_fold(k + 8, n - 8, "range", 5);
		}
		return ferry_http_eq_fold(k, n, "connection", 10);
	case 'e': return ferry_http_eq_fold(k, n, "expect", 6);
	case 'h': return ferry_http_eq_fold(k, n, "host", 4);
	case 'k': return ferry_http_eq_fold(k, n, "keep-alive", 10);
	case 'm': return ferry_http_eq_fold(k, n, "max-forwards", 12);
	case 'p':
		return n > 16 && ferry_http_eq_fold(k, 6, "proxy-", 6)
			&& (ferry_http_eq_fold(k + 6, n - 6, "connection", 10) || ferry_http_eq_fold(k + 6, n - 6, "authenticate", 12)
				|| ferry_http_eq_fold(k + 6, n - 6, "authorization", 13));
	case 'r': return ferry_http_eq_fold(k, n, "range", 5);
	case 't': return ferry_http_eq_fold(k, n, "te", 2) || ferry_http_eq_fold(k, n, "trailer", 7) || ferry_http_eq_fold(k, n, "transfer-encoding", 17);
	case 'w': return ferry_http_eq_fold(k, n, "www-authenticate", 16);
	}
	return false;
}

bool ferry_http_folded_value_ok(const unsigned char *v, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (!(ferry_http_tchar[v[i]] & FH_VALUE) && v[i] != '\r' && v[i] != '\n') {
			return false;
		}
	}
	return true;
}

/* fasthttp's normalizeHeaderValue: CR and LF dropped, a continuation line's leading blanks
 * made one space. The result is never longer, so it is written over the value itself. */
size_t ferry_http_unfold(char *v, size_t len)
{
	size_t w = 0;
	bool line_start = false, once = false;
	for (size_t i = 0; i < len; i++) {
		char c = v[i];
		if (c == '\r' || c == '\n') {
			if (c == '\n') {
				line_start = true, once = false;
			}
			continue;
		}
		if (line_start && (c == ' ' || c == '\t')) {
			if (once) {
				continue;
			}
			c = ' ', once = true;
		} else {
			line_start = false;
		}
		v[w++] = c;
	}
	return w;
}

/* Trailer: a comma list of names, none of them forbidden (fasthttp's AddTrailerBytes). */
bool ferry_http_trailer_list_ok(const char *v, size_t len)
{
	for (size_t i = 0; i < len;) {
		const char *comma = memchr(v + i, ',', len - i);
		size_t end = comma ? (size_t)(comma - v) : len, s = i, e = end;
		while (s < e && v[s] == ' ') {
			s++;
		}
		while (e > s && v[e - 1] == ' ') {
			e--;
		}
		if (ferry_http_bad_trailer(v + s, e - s)) {
			return false;
		}
		i = end + 1;
	}
	return true;
}

/* hasHeaderValue(v, "keep-alive"): a comma list, items stripped of spaces, compared without case */
bool ferry_http_has_keep_alive(const char *v, size_t len)
{
	for (size_t i = 0; i < len;) {
		const char *comma = memchr(v + i, ',', len - i);
		size_t end = comma ? (size_t)(comma - v) : len, s = i, e = end;
		while (s < e && v[s] == ' ') {
			s++;
		}
		while (e > s && v[e - 1] == ' ') {
			e--;
		}
		if (ferry_http_eq_fold(v + s, e - s, "keep-alive", 10)) {
			return true;
		}
		i = end + 1;
	}
	return false;
}

