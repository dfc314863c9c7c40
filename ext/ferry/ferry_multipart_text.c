/*
 * Go's string functions as internal/multipart and mime.ParseMediaType apply them, for
 * ferry_multipart*.c. Go decodes UTF-8 there: TrimSpace drops Unicode spaces (U+00A0,
 * U+2000...), ToLower maps U+0130 to "i" and the Kelvin sign to "k", EqualFold matches
 * U+017F with "s". A client choosing these bytes would otherwise get another answer from
 * a direct-mode worker than from the front.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_multipart_int.h"

size_t mp_space_at(const char *s, const char *end)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = (size_t)(end - s);
	if (n == 0) {
		return 0;
	}
	switch (p[0]) {
	case '\t': case '\n': case '\v': case '\f': case '\r': case ' ':
		return 1;
	case 0xC2: /* U+0085, U+00A0 */
		return n >= 2 && (p[1] == 0x85 || p[1] == 0xA0) ? 2 : 0;
	case 0xE1: /* U+1680 */
		return n >= 3 && p[1] == 0x9A && p[2] == 0x80 ? 3 : 0;
	case 0xE2: /* U+2000..U+200A, U+2028, U+2029, U+202F, U+205F */
		if (n >= 3 && p[1] == 0x80 && (p[2] <= 0x8A ? p[2] >= 0x80 : p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF)) {
			return 3;
		}
		return n >= 3 && p[1] == 0x81 && p[2] == 0x9F ? 3 : 0;
	case 0xE3: /* U+3000 */
		return n >= 3 && p[1] == 0x80 && p[2] == 0x80 ? 3 : 0;
	}
	return 0;
}

/* The space rune ending at end: its encoding is a valid suffix, which Go's backward
 * decoding reads as that rune whatever precedes it. */
static size_t space_before(const char *start, const char *end)
{
	size_t avail = (size_t)(end - start);
	for (size_t n = 1; n <= 3 && n <= avail; n++) {
		if (mp_space_at(end - n, end) == n) {
			return n;
		}
	}
	return 0;
}

void mp_trim_space(const char **s, const char **e)
{
	size_t n;
	while (*s < *e && (n = mp_space_at(*s, *e)) > 0) {
		*s += n;
	}
	while (*e > *s && (n = space_before(*s, *e)) > 0) {
		*e -= n;
	}
}

int mp_lower_ascii(const char *s, const char *end, size_t *n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t avail = (size_t)(end - s);
	if (p[0] < 0x80) {
		*n = 1;
		return p[0] >= 'A' && p[0] <= 'Z' ? p[0] + 32 : p[0];
	}
	if (avail >= 2 && p[0] == 0xC4 && p[1] == 0xB0) { /* U+0130 */
		*n = 2;
		return 'i';
	}
	if (avail >= 3 && p[0] == 0xE2 && p[1] == 0x84 && p[2] == 0xAA) { /* U+212A */
		*n = 3;
		return 'k';
	}
	*n = 1;
	return -1;
}

int mp_lower_ascii_last(const char *start, const char *end, size_t *n)
{
	const unsigned char *p = (const unsigned char *)end;
	size_t avail = (size_t)(end - start);
	if (p[-1] < 0x80) {
		*n = 1;
		return p[-1] >= 'A' && p[-1] <= 'Z' ? p[-1] + 32 : p[-1];
	}
	if (avail >= 2 && p[-2] == 0xC4 && p[-1] == 0xB0) {
		*n = 2;
		return 'i';
	}
	if (avail >= 3 && p[-3] == 0xE2 && p[-2] == 0x84 && p[-1] == 0xAA) {
		*n = 3;
		return 'k';
	}
	*n = 1;
	return -1;
}

bool mp_lower_eq(const char *s, size_t n, const char *lit)
{
	const char *end = s + n;
	size_t w;
	for (; s < end; s += w, lit++) {
		if (*lit == '\0' || mp_lower_ascii(s, end, &w) != (unsigned char)*lit) {
			return false;
		}
	}
	return *lit == '\0';
}

bool mp_fold_eq(const char *s, size_t n, const char *lit)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	for (; p < end; lit++) {
		int c;
		if (p[0] < 0x80) {
			c = p[0] >= 'A' && p[0] <= 'Z' ? p[0] + 32 : p[0];
			p++;
		} else if (end - p >= 2 && p[0] == 0xC5 && p[1] == 0xBF) { /* U+017F */
			c = 's';
			p += 2;
		} else if (end - p >= 3 && p[0] == 0xE2 && p[1] == 0x84 && p[2] == 0xAA) { /* U+212A */
			c = 'k';
			p += 3;
		} else {
			return false;
		}
		if (*lit == '\0' || c != (unsigned char)*lit) {
			return false;
		}
	}
	return *lit == '\0';
}

/* utf8.DecodeRune: the rune and its width; -1 width 1 for an invalid byte. */
static int32_t decode(const unsigned char *p, size_t avail, size_t *w)
{
	*w = 1;
	if (p[0] < 0x80) {
		return p[0];
	}
	int need;
	int32_t r, min;
	if (p[0] >= 0xC2 && p[0] <= 0xDF) {
		need = 1, r = p[0] & 0x1F, min = 0x80;
	} else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
		need = 2, r = p[0] & 0x0F, min = 0x800;
	} else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
		need = 3, r = p[0] & 0x07, min = 0x10000;
	} else {
		return -1;
	}
	if ((size_t)need >= avail) {
		return -1;
	}
	for (int i = 1; i <= need; i++) {
		if ((p[i] & 0xC0) != 0x80) {
			return -1;
		}
		r = r << 6 | (p[i] & 0x3F);
	}
	if (r < min || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) {
		return -1;
	}
	*w = (size_t)need + 1;
	return r;
}

static char *msg;
static size_t msg_cap;

const char *mp_message_name(const char *head, const char *s, size_t n, const char *tail)
{
	size_t need = strlen(head) + strlen(tail) + 10 * n + 3;
	if (need > msg_cap) {
		char *m = realloc(msg, need);
		if (!m) {
			return NULL;
		}
		msg = m, msg_cap = need;
	}
	static const char hex[] = "0123456789abcdef";
	char *o = msg;
	o += sprintf(o, "%s\"", head);
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	while (p < end) {
		size_t w;
		int32_t r = decode(p, (size_t)(end - p), &w);
		if (r < 0) {
			o += sprintf(o, "\\x%c%c", hex[p[0] >> 4], hex[p[0] & 15]);
		} else if (r == '"' || r == '\\') {
			*o++ = '\\', *o++ = (char)r;
		} else if (mp_printable(r)) {
			memcpy(o, p, w);
			o += w;
		} else {
			const char *esc = NULL;
			switch (r) {
			case '\a': esc = "\\a"; break;
			case '\b': esc = "\\b"; break;
			case '\f': esc = "\\f"; break;
			case '\n': esc = "\\n"; break;
			case '\r': esc = "\\r"; break;
			case '\t': esc = "\\t"; break;
			case '\v': esc = "\\v"; break;
			}
			if (esc) {
				o += sprintf(o, "%s", esc);
			} else if (r < 0x20 || r == 0x7F) {
				o += sprintf(o, "\\x%02x", (unsigned)r);
			} else if (r < 0x10000) {
				o += sprintf(o, "\\u%04x", (unsigned)r);
			} else {
				o += sprintf(o, "\\U%08x", (unsigned)r);
			}
		}
		p += w;
	}
	sprintf(o, "\"%s", tail);
	return msg;
}
