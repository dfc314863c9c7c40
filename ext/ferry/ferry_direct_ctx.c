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
#include "ext/standard/php_var.h"
#include "ferry_direct.h"
#include "ferry_multipart.h"

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
	size_t host_len, bool https, const direct_form *form, zval *cookies)
{
	bool parsed = form && form->parsed;
	bool has_cookies = cookies && Z_TYPE_P(cookies) == IS_ARRAY && zend_hash_num_elements(Z_ARRVAL_P(cookies)) > 0;
	size_t n = 6 + (r->query_len > 0) + (r->minor == 0) + https + has_cookies
		+ (parsed ? 1 + (form->fields > 0) + (form->files > 0) : 0);
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
	if (has_cookies) {
		/* $_COOKIE as PHP's parser made it: nested names as arrays, which the reader keeps as they are */
		SER_KEY(out, "s:7:\"cookies\";");
		php_serialize_data_t data;
		PHP_VAR_SERIALIZE_INIT(data);
		php_var_serialize(out, cookies, &data);
		PHP_VAR_SERIALIZE_DESTROY(data);
	}
	if (parsed) {
		if (form->fields > 0) {
			SER_KEY(out, "s:4:\"form\";");
			ser_open(out, form->fields);
			smart_str_append_smart_str(out, &form->form);
			smart_str_appendc(out, '}');
		}
		if (form->files > 0) {
			SER_KEY(out, "s:5:\"files\";");
			ser_open(out, form->files);
			smart_str_append_smart_str(out, &form->uploads);
			smart_str_appendc(out, '}');
		}
		SER_KEY(out, "s:6:\"parsed\";b:1;");
	}
	smart_str_appendc(out, '}');
}

static void on_field(void *ctx, const char *name, size_t name_len, const char *value, size_t value_len)
{
	direct_form *f = ctx;
	ser_int(&f->form, (zend_long) f->fields++);
	ser_open(&f->form, 2);
	ser_int(&f->form, 0);
	ser_str(&f->form, name, name_len);
	ser_int(&f->form, 1);
	ser_str(&f->form, value, value_len);
	smart_str_appendc(&f->form, '}');
}

static void on_file(void *ctx, const char *field, size_t field_len, const char *name, size_t name_len,
	const char *type, size_t type_len, const char *path, int error, int64_t size)
{
	direct_form *f = ctx;
	smart_str *u = &f->uploads;
	ser_int(u, (zend_long) f->files++);
	ser_open(u, 6);
	ser_int(u, 0);
	ser_str(u, field, field_len);
	ser_int(u, 1);
	ser_str(u, name, name_len);
	ser_int(u, 2);
	ser_str(u, type, type_len);
	ser_int(u, 3);
	ser_str(u, path, strlen(path));
	ser_int(u, 4);
	ser_int(u, error);
	ser_int(u, 5);
	ser_int(u, (zend_long) size);
	smart_str_appendc(u, '}');
	if (path[0]) {
		smart_str_appends(&f->paths, path);
		smart_str_appendc(&f->paths, '\0');
	}
}

int ferry_direct_multipart(const ferry_http_request *r, const char *body, size_t len, const ferry_multipart_limits *limits,
	direct_form *out, const char **error)
{
	/* the Content-Type fasthttp keeps: the last one */
	const ferry_http_field *type = NULL;
	for (size_t i = 0; i < r->field_count; i++) {
		if (named(&r->fields[i], "content-type", 12)) {
			type = &r->fields[i];
		}
	}
	const char *boundary;
	size_t boundary_len;
	if (!type || !ferry_multipart_boundary(type->value, type->value_len, &boundary, &boundary_len)) {
		return 0;
	}
	out->parsed = true;
	ferry_multipart_sink sink = {on_field, on_file, out};
	int status = ferry_multipart_parse(body, len, boundary, boundary_len, limits, &sink, error);
	if (status != 0) {
		/* the parser removed its files: what the sink heard of is void */
		smart_str_free(&out->form);
		smart_str_free(&out->uploads);
		smart_str_free(&out->paths);
		out->fields = out->files = 0;
		out->parsed = false;
	}
	return status;
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
