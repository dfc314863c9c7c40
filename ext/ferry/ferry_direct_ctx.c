/*
 * A parsed request as the job context the Go front sends (docs/protocol.md, "HTTP request
 * context"), so that a direct-mode job runs through exactly the code a relayed one does.
 * Cookies are not in it: ferry_direct.c fills the Request's $cookies with PHP's own parser
 * (ferry_direct_cookies()), which is what the front's Go port of it imitates.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "SAPI.h"
#include "main/php_variables.h"
#include "zend_smart_str.h"
#include "ferry_direct.h"

static void ser_str(smart_str *out, const char *s, size_t len)
{
	smart_str_appendl(out, "s:", 2);
	smart_str_append_unsigned(out, len);
	smart_str_appendl(out, ":\"", 2);
	smart_str_appendl(out, s, len);
	smart_str_appendl(out, "\";", 2);
}

static void ser_int(smart_str *out, zend_long i)
{
	smart_str_appendl(out, "i:", 2);
	smart_str_append_long(out, i);
	smart_str_appendc(out, ';');
}

static void ser_open(smart_str *out, size_t n)
{
	smart_str_appendl(out, "a:", 2);
	smart_str_append_unsigned(out, n);
	smart_str_appendl(out, ":{", 2);
}

#define SER_KEY(out, k) smart_str_appendl(out, k, sizeof(k) - 1)

/* fasthttp's normalizing, which the front's names have: a letter at the start or after '-' upper case, the rest lower. */
static void canonical(char *dst, const char *src, size_t len)
{
	bool upper = true;
	for (size_t i = 0; i < len; i++) {
		char ch = src[i];
		if (upper && ch >= 'a' && ch <= 'z') {
			ch -= 32;
		} else if (!upper && ch >= 'A' && ch <= 'Z') {
			ch += 32;
		}
		dst[i] = ch;
		upper = ch == '-';
	}
}

static bool same_name(const ferry_http_field *a, const ferry_http_field *b)
{
	return a->name_len == b->name_len && zend_binary_strcasecmp(a->name, a->name_len, b->name, b->name_len) == 0;
}

static bool named(const ferry_http_field *f, const char *lower, size_t len)
{
	return f->name_len == len && zend_binary_strcasecmp(f->name, len, lower, len) == 0;
}

/*
 * The fields fasthttp keeps apart and the front gives first, in this order, each once: the
 * last Content-Type and User-Agent, and the Cookie lines joined with "; " (absent when
 * that is empty). Every other field follows in the order received, repeated ones in one
 * list at the place of the first.
 */
enum { SP_HOST, SP_LENGTH, SP_TYPE, SP_AGENT, SP_TRAILER, SP_COOKIE, SP_COUNT };
static const struct {
	const char *name, *lower;
	size_t len;
} specials[SP_COUNT] = {
	{"Host", "host", 4}, {"Content-Length", "content-length", 14}, {"Content-Type", "content-type", 12},
	{"User-Agent", "user-agent", 10}, {"Trailer", "trailer", 7}, {"Cookie", "cookie", 6},
};

static int special(const ferry_http_field *f)
{
	for (int i = 0; i < SP_COUNT; i++) {
		if (named(f, specials[i].lower, specials[i].len)) {
			return i;
		}
	}
	return -1;
}

/* Whether field i is the first of its name: repeated fields go in one list, in first-seen order. */
static bool first_of_name(const ferry_http_request *r, size_t i)
{
	for (size_t j = 0; j < i; j++) {
		if (same_name(&r->fields[j], &r->fields[i])) {
			return false;
		}
	}
	return true;
}

static void ser_headers(smart_str *out, const ferry_http_request *r)
{
	const ferry_http_field *last[SP_COUNT] = {0};
	size_t cookie_len = 0, cookies = 0, distinct = 0;
	for (size_t i = 0; i < r->field_count; i++) {
		int sp = special(&r->fields[i]);
		if (sp < 0) {
			/* Quadratic in the worst case: the field count is bounded by max_headers (and max_head). */
			distinct += first_of_name(r, i);
			continue;
		}
		if (sp == SP_COOKIE) {
			if (r->fields[i].value_len > 0) {
				cookie_len += (cookies++ ? 2 : 0) + r->fields[i].value_len;
			}
			continue;
		}
		last[sp] = &r->fields[i];
	}
	for (int sp = 0; sp < SP_COUNT; sp++) {
		distinct += sp == SP_COOKIE ? cookie_len > 0 : last[sp] != NULL;
	}
	ser_open(out, distinct);
	for (int sp = 0; sp < SP_COUNT; sp++) {
		if (sp == SP_COOKIE) {
			if (cookie_len == 0) {
				continue;
			}
			ser_str(out, "Cookie", 6);
			smart_str_appendl(out, "a:1:{i:0;s:", sizeof("a:1:{i:0;s:") - 1);
			smart_str_append_unsigned(out, cookie_len);
			smart_str_appendl(out, ":\"", 2);
			size_t n = 0;
			for (size_t i = 0; i < r->field_count; i++) {
				const ferry_http_field *f = &r->fields[i];
				if (f->value_len > 0 && named(f, "cookie", 6)) {
					if (n++) {
						smart_str_appendl(out, "; ", 2);
					}
					smart_str_appendl(out, f->value, f->value_len);
				}
			}
			smart_str_appendl(out, "\";}", 3);
			continue;
		}
		if (last[sp]) {
			ser_str(out, specials[sp].name, specials[sp].len);
			smart_str_appendl(out, "a:1:{i:0;", sizeof("a:1:{i:0;") - 1);
			ser_str(out, last[sp]->value, last[sp]->value_len);
			smart_str_appendc(out, '}');
		}
	}
	char name[256];
	for (size_t i = 0; i < r->field_count; i++) {
		const ferry_http_field *f = &r->fields[i];
		if (special(f) >= 0 || !first_of_name(r, i)) {
			continue;
		}
		size_t n = 0;
		for (size_t j = i; j < r->field_count; j++) {
			n += same_name(&r->fields[j], f);
		}
		if (f->name_len <= sizeof(name)) {
			canonical(name, f->name, f->name_len);
			ser_str(out, name, f->name_len);
		} else {
			ser_str(out, f->name, f->name_len);
		}
		ser_open(out, n);
		n = 0;
		for (size_t j = i; j < r->field_count; j++) {
			if (same_name(&r->fields[j], f)) {
				ser_int(out, (zend_long) n++);
				ser_str(out, r->fields[j].value, r->fields[j].value_len);
			}
		}
		smart_str_appendc(out, '}');
	}
	smart_str_appendc(out, '}');
}

void ferry_direct_context(smart_str *out, const ferry_http_request *r, const char *remote, const char *host,
	size_t host_len, bool https)
{
	size_t n = 6 + (r->query_len > 0) + (r->minor == 0) + https;
	ser_open(out, n);
	SER_KEY(out, "s:6:\"method\";");
	ser_str(out, r->method, r->method_len);
	SER_KEY(out, "s:3:\"uri\";");
	if (r->target_len > 0 && r->target[0] != '/' && !(r->target_len == 1 && r->target[0] == '*')) {
		/* absolute-form: PHP gets the path and query, as the front gives it (REQUEST_URI under FPM) */
		size_t len = r->path_len + (r->query ? 1 + r->query_len : 0);
		smart_str_appendl(out, "s:", 2);
		smart_str_append_unsigned(out, len);
		smart_str_appendl(out, ":\"", 2);
		smart_str_appendl(out, r->path, r->path_len);
		if (r->query) {
			smart_str_appendc(out, '?');
			smart_str_appendl(out, r->query, r->query_len);
		}
		smart_str_appendl(out, "\";", 2);
	} else {
		ser_str(out, r->target, r->target_len);
	}
	SER_KEY(out, "s:4:\"path\";");
	ser_str(out, r->path, r->path_len);
	if (r->query_len > 0) {
		SER_KEY(out, "s:5:\"query\";");
		ser_str(out, r->query, r->query_len);
	}
	if (r->minor == 0) {
		SER_KEY(out, "s:8:\"protocol\";s:8:\"HTTP/1.0\";");
	}
	SER_KEY(out, "s:11:\"remote_addr\";");
	ser_str(out, remote, strlen(remote));
	SER_KEY(out, "s:4:\"host\";");
	ser_str(out, host, host_len);
	if (https) {
		SER_KEY(out, "s:6:\"scheme\";s:5:\"https\";");
	}
	SER_KEY(out, "s:7:\"headers\";");
	ser_headers(out, r);
	smart_str_appendc(out, '}');
}

/*
 * $_COOKIE for the request's Cookie fields, by PHP's own parser (main/php_variables.c: the
 * fields joined with "; " as FPM gets them, max_input_vars and the name mangling included).
 * An empty array when there are none.
 */
void ferry_direct_cookies(const ferry_http_request *r, zval *out)
{
	smart_str joined = {0};
	for (size_t i = 0; i < r->field_count; i++) {
		const ferry_http_field *f = &r->fields[i];
		if (f->name_len == 6 && zend_binary_strcasecmp(f->name, 6, "cookie", 6) == 0) {
			if (joined.s) {
				smart_str_appendl(&joined, "; ", 2);
			}
			smart_str_appendl(&joined, f->value, f->value_len);
		}
	}
	if (!joined.s) {
		ZVAL_EMPTY_ARRAY(out);
		return;
	}
	smart_str_0(&joined);
	char *saved = SG(request_info).cookie_data;
	SG(request_info).cookie_data = ZSTR_VAL(joined.s);
	/* PHP leaves the result in its $_COOKIE track variable: taken from there, and that put back. */
	zval kept;
	ZVAL_COPY_VALUE(&kept, &PG(http_globals)[TRACK_VARS_COOKIE]);
	ZVAL_UNDEF(&PG(http_globals)[TRACK_VARS_COOKIE]);
	php_default_treat_data(PARSE_COOKIE, NULL, NULL);
	SG(request_info).cookie_data = saved;
	ZVAL_COPY_VALUE(out, &PG(http_globals)[TRACK_VARS_COOKIE]);
	ZVAL_COPY_VALUE(&PG(http_globals)[TRACK_VARS_COOKIE], &kept);
	if (Z_TYPE_P(out) != IS_ARRAY) {
		zval_ptr_dtor(out);
		ZVAL_EMPTY_ARRAY(out);
	}
	smart_str_free(&joined);
}
