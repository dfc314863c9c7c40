/*
 * A reader for the JSON php/worker's json_encode() gives an answer context (objects, arrays,
 * strings with their escapes, integers, booleans): what ferry_direct_answer.c turns into an
 * HTTP head. Each function skips the whitespace before what it reads.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_smart_str.h"
#include "ferry_direct_int.h"

void ferry_json_ws(ferry_json *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t')) {
		j->p++;
	}
}

bool ferry_json_lit(ferry_json *j, char c)
{
	ferry_json_ws(j);
	if (j->p < j->end && *j->p == c) {
		j->p++;
		return true;
	}
	return false;
}

static int hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool hex4(ferry_json *j, unsigned *u)
{
	if (j->end - j->p < 4) {
		return false;
	}
	*u = 0;
	for (int i = 0; i < 4; i++) {
		int h = hex(j->p[i]);
		if (h < 0) {
			return false;
		}
		*u = *u << 4 | (unsigned) h;
	}
	j->p += 4;
	return true;
}

static void utf8(smart_str *s, unsigned cp)
{
	if (cp < 0x80) {
		smart_str_appendc(s, (char) cp);
	} else if (cp < 0x800) {
		smart_str_appendc(s, (char) (0xC0 | cp >> 6));
		smart_str_appendc(s, (char) (0x80 | (cp & 0x3F)));
	} else if (cp < 0x10000) {
		smart_str_appendc(s, (char) (0xE0 | cp >> 12));
		smart_str_appendc(s, (char) (0x80 | (cp >> 6 & 0x3F)));
		smart_str_appendc(s, (char) (0x80 | (cp & 0x3F)));
	} else {
		smart_str_appendc(s, (char) (0xF0 | cp >> 18));
		smart_str_appendc(s, (char) (0x80 | (cp >> 12 & 0x3F)));
		smart_str_appendc(s, (char) (0x80 | (cp >> 6 & 0x3F)));
		smart_str_appendc(s, (char) (0x80 | (cp & 0x3F)));
	}
}

/* A string, decoded into s (which is reset first). */
bool ferry_json_str(ferry_json *j, smart_str *s)
{
	if (!ferry_json_lit(j, '"')) {
		return false;
	}
	if (s->s) {
		ZSTR_LEN(s->s) = 0;
	}
	for (;;) {
		const char *start = j->p;
		while (j->p < j->end && *j->p != '"' && *j->p != '\\') {
			j->p++;
		}
		smart_str_appendl(s, start, (size_t) (j->p - start));
		if (j->p >= j->end) {
			return false;
		}
		if (*j->p++ == '"') {
			smart_str_0(s);
			return true;
		}
		if (j->p >= j->end) {
			return false;
		}
		char e = *j->p++;
		unsigned u, lo;
		switch (e) {
			case '"': case '\\': case '/': smart_str_appendc(s, e); break;
			case 'b': smart_str_appendc(s, '\b'); break;
			case 'f': smart_str_appendc(s, '\f'); break;
			case 'n': smart_str_appendc(s, '\n'); break;
			case 'r': smart_str_appendc(s, '\r'); break;
			case 't': smart_str_appendc(s, '\t'); break;
			case 'u':
				if (!hex4(j, &u)) {
					return false;
				}
				if (u >= 0xD800 && u < 0xDC00 && j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u') {
					j->p += 2;
					if (!hex4(j, &lo) || lo < 0xDC00 || lo >= 0xE000) {
						return false;
					}
					u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
				}
				utf8(s, u);
				break;
			default:
				return false;
		}
	}
}

bool ferry_json_integer(ferry_json *j, zend_long *v)
{
	ferry_json_ws(j);
	const char *start = j->p;
	zend_long n = 0;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9' && j->p - start < 18) {
		n = n * 10 + (*j->p++ - '0');
	}
	*v = n;
	return j->p > start;
}

/* Skips any value (an unknown key's). */
bool ferry_json_skip(ferry_json *j, int depth)
{
	smart_str tmp = {0};
	bool ok = false;
	ferry_json_ws(j);
	if (j->p >= j->end || depth > 8) {
		return false;
	}
	if (*j->p == '"') {
		ok = ferry_json_str(j, &tmp);
	} else if (*j->p == '{' || *j->p == '[') {
		char close = *j->p == '{' ? '}' : ']';
		j->p++;
		ok = true;
		if (!ferry_json_lit(j, close)) {
			do {
				if (close == '}' && (!ferry_json_str(j, &tmp) || !ferry_json_lit(j, ':'))) {
					ok = false;
					break;
				}
				if (!ferry_json_skip(j, depth + 1)) {
					ok = false;
					break;
				}
			} while (ferry_json_lit(j, ','));
			ok = ok && ferry_json_lit(j, close);
		}
	} else {
		while (j->p < j->end && strchr("-+.eE0123456789truefalsn", *j->p)) {
			j->p++;
		}
		ok = true;
	}
	smart_str_free(&tmp);
	return ok;
}

bool ferry_json_boolean(ferry_json *j, bool *v)
{
	ferry_json_ws(j);
	if (j->end - j->p >= 4 && memcmp(j->p, "true", 4) == 0) {
		j->p += 4;
		*v = true;
		return true;
	}
	if (j->end - j->p >= 5 && memcmp(j->p, "false", 5) == 0) {
		j->p += 5;
		*v = false;
		return true;
	}
	return false;
}
