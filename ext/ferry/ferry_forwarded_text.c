/*
 * Text as the front's Go code sees it (ferry_forwarded_int.h): bytes.TrimSpace and
 * bytes.EqualFold are Unicode-aware, so a forwarded value that ends in U+00A0 or spells
 * https with U+017F means to the front what its ASCII form means, and must here too.
 */
#include <string.h>

#include "ferry_forwarded_int.h"

/* The UTF-8 forms of unicode.IsSpace's code points above ASCII. */
static const char *const wide_spaces[] = {
	"\xc2\x85", "\xc2\xa0", "\xe1\x9a\x80",
	"\xe2\x80\x80", "\xe2\x80\x81", "\xe2\x80\x82", "\xe2\x80\x83", "\xe2\x80\x84", "\xe2\x80\x85",
	"\xe2\x80\x86", "\xe2\x80\x87", "\xe2\x80\x88", "\xe2\x80\x89", "\xe2\x80\x8a",
	"\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80",
};

static bool ascii_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* The length of the white space rune s starts with (a whole valid encoding), or 0. */
static size_t space_at(const char *s, size_t n)
{
	if (n == 0) {
		return 0;
	}
	if ((unsigned char) s[0] < 0x80) {
		return ascii_space((unsigned char) s[0]) ? 1 : 0;
	}
	for (size_t i = 0; i < sizeof(wide_spaces) / sizeof(wide_spaces[0]); i++) {
		size_t len = strlen(wide_spaces[i]);
		if (n >= len && memcmp(s, wide_spaces[i], len) == 0) {
			return len;
		}
	}
	return 0;
}

void ferry_fwd_trim_space(const char **sp, size_t *np)
{
	const char *s = *sp;
	size_t n = *np, w;
	while ((w = space_at(s, n)) > 0) {
		s += w;
		n -= w;
	}
	while (n > 0) {
		unsigned char last = (unsigned char) s[n - 1];
		if (last < 0x80) {
			if (!ascii_space(last)) {
				break;
			}
			n--;
			continue;
		}
		/* utf8.DecodeLastRune: back to a start byte at most 3 bytes before, and that
		 * rune must end exactly at the end, or it is RuneError (no space). */
		size_t start = n - 1, lim = n >= 4 ? n - 4 : 0;
		while (start > lim && ((unsigned char) s[start] & 0xc0) == 0x80) {
			start--;
		}
		w = space_at(s + start, n - start);
		if (w == 0 || start + w != n) {
			break;
		}
		n = start;
	}
	*sp = s;
	*np = n;
}

bool ferry_fwd_equal_fold(const char *s, size_t n, const char *word)
{
	size_t i = 0;
	for (; *word; word++) {
		if (i >= n) {
			return false;
		}
		unsigned char c = (unsigned char) s[i];
		if (c < 0x80) {
			if (c >= 'A' && c <= 'Z') {
				c = (unsigned char) (c - 'A' + 'a');
			}
			if (c != (unsigned char) *word) {
				return false;
			}
			i++;
		} else if (*word == 's' && n - i >= 2 && memcmp(s + i, "\xc5\xbf", 2) == 0) {
			i += 2;
		} else if (*word == 'k' && n - i >= 3 && memcmp(s + i, "\xe2\x84\xaa", 3) == 0) {
			i += 3;
		} else {
			return false;
		}
	}
	return i == n;
}

/* grammar.go's uriClass, the three classes a host needs. */
static bool is_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_reg_name(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		|| (c != 0 && strchr("-._~!$&'()*+,;=", c) != NULL);
}

static bool valid_port(const char *p, size_t n)
{
	if (n > 5) {
		while (n > 0 && *p == '0') {
			p++;
			n--;
		}
	}
	long v = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9') {
			return false;
		}
		if ((v = v * 10 + (p[i] - '0')) > 65535) {
			return false;
		}
	}
	return true;
}

static bool valid_ip_literal(const char *s, size_t n)
{
	if (n > 0 && (s[0] == 'v' || s[0] == 'V')) {
		size_t i = 1;
		while (i < n && is_hex((unsigned char) s[i])) {
			i++;
		}
		if (i == 1 || i + 1 >= n || s[i] != '.') {
			return false;
		}
		for (i++; i < n; i++) {
			if (!is_reg_name((unsigned char) s[i]) && s[i] != ':') {
				return false;
			}
		}
		return true;
	}
	for (size_t i = 0; i < n; i++) {
		if (!is_hex((unsigned char) s[i]) && s[i] != ':' && s[i] != '.') {
			return false;
		}
	}
	ferry_addr a;
	return ferry_addr_parse(s, n, &a) && !a.v4;
}

bool ferry_fwd_valid_host(const char *b, size_t n)
{
	const char *port = NULL;
	size_t port_len = 0;
	if (n > 0 && b[0] == '[') {
		const char *end = memchr(b, ']', n);
		if (!end || !valid_ip_literal(b + 1, (size_t) (end - b - 1))) {
			return false;
		}
		size_t rest = n - (size_t) (end + 1 - b);
		if (rest > 0) {
			if (end[1] != ':') {
				return false;
			}
			port = end + 2;
			port_len = rest - 1;
		}
	} else {
		size_t i = 0;
		for (; i < n; i++) {
			unsigned char c = (unsigned char) b[i];
			if ((is_reg_name(c) && c != '.') || (c == '.' && (i == 0 || b[i - 1] != '.'))) {
				continue;
			}
			break;
		}
		if (i < n) {
			if (b[i] != ':') {
				return false;
			}
			port = b + i + 1;
			port_len = n - i - 1;
		}
		if (i == 0 || (i == 1 && b[0] == '.')) {
			return false;
		}
	}
	return valid_port(port, port_len);
}
