/*
 * PHP face of ferry_http.c, for tests only: Ferry\Ext\http_parse_head() and
 * http_decode_chunked() let the phpt suite and cmd/ferry/direct_verdicts_e2e_test.go put
 * bytes through the C parser and compare its verdicts with the Go front's.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "php_ferry.h"
#include "ferry_http.h"

static void add_span(zval *arr, const char *key, const char *p, size_t len)
{
	if (p) {
		add_assoc_stringl(arr, key, p, len);
	} else {
		add_assoc_null(arr, key);
	}
}

static zend_long limit(HashTable *limits, const char *key)
{
	zval *v = zend_hash_str_find(limits, key, strlen(key));
	return v ? zval_get_long(v) : 0;
}

/* http_parse_head(string $bytes, array $limits = []): array
 * $limits: max_head, max_headers, max_body (ferry_http_limits) and slots (the field slots;
 * default max_headers, or 100000 without it). */
ZEND_FUNCTION(ferry_http_parse_head)
{
	zend_string *bytes;
	HashTable *limits = NULL;
	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_STR(bytes)
		Z_PARAM_OPTIONAL
		Z_PARAM_ARRAY_HT(limits)
	ZEND_PARSE_PARAMETERS_END();

	ferry_http_limits lim = {0};
	zend_long slots = 100000;
	if (limits) {
		lim.max_head = (size_t)MAX(0, limit(limits, "max_head"));
		lim.max_headers = (size_t)MAX(0, limit(limits, "max_headers"));
		lim.max_body = (uint64_t)MAX(0, limit(limits, "max_body"));
		if (lim.max_headers) {
			slots = (zend_long)lim.max_headers;
		}
		if (limit(limits, "slots") > 0) {
			slots = limit(limits, "slots");
		}
		slots = MIN(slots, 1 << 20); /* a test's typo must not ask for gigabytes */
	}
	ferry_http_field *fields = safe_emalloc((size_t)slots, sizeof *fields, 0);
	ferry_http_request r = {.fields = fields, .field_slots = (size_t)slots};
	size_t consumed = 0;
	ferry_http_status s = ferry_http_parse_head(ZSTR_VAL(bytes), ZSTR_LEN(bytes), &lim, &r, &consumed);

	array_init(return_value);
	add_assoc_long(return_value, "status", (zend_long)s);
	if (r.error) {
		add_assoc_string(return_value, "error", r.error);
	} else {
		add_assoc_null(return_value, "error");
	}
	add_assoc_long(return_value, "consumed", (zend_long)consumed);
	add_span(return_value, "method", r.method, r.method_len);
	add_span(return_value, "target", r.target, r.target_len);
	add_span(return_value, "path", s == FERRY_HTTP_OK ? r.path : NULL, r.path_len);
	add_span(return_value, "query", r.query, r.query_len);
	add_span(return_value, "host", r.host, r.host_len);
	add_assoc_long(return_value, "minor", r.minor);
	zval list;
	array_init_size(&list, (uint32_t)r.field_count);
	for (size_t i = 0; i < r.field_count; i++) {
		zval pair;
		array_init_size(&pair, 2);
		add_next_index_stringl(&pair, r.fields[i].name, r.fields[i].name_len);
		add_next_index_stringl(&pair, r.fields[i].value, r.fields[i].value_len);
		add_next_index_zval(&list, &pair);
	}
	add_assoc_zval(return_value, "fields", &list);
	add_assoc_long(return_value, "content_length", (zend_long)r.content_length);
	add_assoc_bool(return_value, "chunked", r.chunked);
	add_assoc_bool(return_value, "keep_alive", r.keep_alive);
	add_assoc_bool(return_value, "expect_continue", r.expect_continue);
	efree(fields);
}

/* http_decode_chunked(string $bytes, int $max_body = 0, int $max_trailer = 0): array
 * One call over the whole input: ['status', 'consumed', 'body']. */
ZEND_FUNCTION(ferry_http_decode_chunked)
{
	zend_string *bytes;
	zend_long max_body = 0, max_trailer = 0;
	ZEND_PARSE_PARAMETERS_START(1, 3)
		Z_PARAM_STR(bytes)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(max_body)
		Z_PARAM_LONG(max_trailer)
	ZEND_PARSE_PARAMETERS_END();

	zend_string *body = zend_string_init(ZSTR_VAL(bytes), ZSTR_LEN(bytes), 0);
	ferry_http_chunked c = {.max_trailer = (size_t)MAX(0, max_trailer)};
	size_t consumed = 0, produced = 0;
	ferry_http_status s = ferry_http_chunked_decode(&c, ZSTR_VAL(body), ZSTR_LEN(body), (uint64_t)MAX(0, max_body),
		&consumed, &produced);
	ZSTR_VAL(body)[produced] = '\0';
	ZSTR_LEN(body) = produced;
	array_init(return_value);
	add_assoc_long(return_value, "status", (zend_long)s);
	add_assoc_long(return_value, "consumed", (zend_long)consumed);
	add_assoc_str(return_value, "body", body);
	/* the last chunk is read and the trailer section not yet whole (for a model of the
	 * front, which takes the end of input there for the end of the body) */
	add_assoc_bool(return_value, "trailer", s == FERRY_HTTP_NEED_MORE && ferry_http_chunked_in_trailer(&c));
}
