/*
 * A web SAPI's header behaviour inside a CLI worker.
 *
 * The CLI's header handler drops every header and its send_headers writes nothing, so
 * header(), setcookie(), session_start() and friends vanish. Between request_begin() and
 * request_end() our hooks let SAPI.c keep its list (SG(sapi_headers)) as FPM does, and
 * mark the headers "sent" at the first output without writing them anywhere: the SDK
 * collects them at request_end() and puts them in the answer. Outside a request the
 * original handlers run, so the worker's own code sees the plain CLI.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "SAPI.h"
#include "main/php_output.h"
#include "zend_exceptions.h"
#include "php_ferry.h"

static int (*orig_header_handler)(sapi_header_struct *, sapi_header_op_enum, sapi_headers_struct *);
static int (*orig_send_headers)(sapi_headers_struct *);
static bool hooked;

static int ferry_header_handler(sapi_header_struct *header, sapi_header_op_enum op, sapi_headers_struct *headers)
{
	if (!FERRY_G(in_request)) {
		return orig_header_handler ? orig_header_handler(header, op, headers) : SAPI_HEADER_ADD;
	}
	/* Chained for its side effects only (a debugger recording headers): the CLI's own
	 * answer is "drop it", which is exactly what a request must not do. */
	if (orig_header_handler) {
		(void) orig_header_handler(header, op, headers);
	}
	return SAPI_HEADER_ADD;
}

static int ferry_send_headers(sapi_headers_struct *headers)
{
	if (!FERRY_G(in_request)) {
		return orig_send_headers ? orig_send_headers(headers) : SAPI_HEADER_DO_SEND;
	}
	FERRY_G(sent_status) = SG(sapi_headers).http_response_code;
	/* sapi_send_headers() frees the status line right after this call. */
	if (FERRY_G(sent_reason)) {
		zend_string_release(FERRY_G(sent_reason));
		FERRY_G(sent_reason) = NULL;
	}
	if (SG(sapi_headers).http_status_line) {
		FERRY_G(sent_reason) = zend_string_init(SG(sapi_headers).http_status_line,
			strlen(SG(sapi_headers).http_status_line), 0);
	}
	return SAPI_HEADER_SENT_SUCCESSFULLY;
}

void ferry_sapi_minit(void)
{
	orig_header_handler = sapi_module.header_handler;
	orig_send_headers = sapi_module.send_headers;
	sapi_module.header_handler = ferry_header_handler;
	sapi_module.send_headers = ferry_send_headers;
	hooked = true;
}

void ferry_sapi_mshutdown(void)
{
	/* Only undo our own hook: another extension may have wrapped it since. */
	if (hooked && sapi_module.header_handler == ferry_header_handler) {
		sapi_module.header_handler = orig_header_handler;
	}
	if (hooked && sapi_module.send_headers == ferry_send_headers) {
		sapi_module.send_headers = orig_send_headers;
	}
	hooked = false;
}

/* Everything php_request_startup()/sapi_activate() would give a fresh FPM request. */
static void ferry_reset_response(void)
{
	zend_llist_clean(&SG(sapi_headers).headers);
	SG(sapi_headers).http_response_code = 200;
	if (SG(sapi_headers).http_status_line) {
		efree(SG(sapi_headers).http_status_line);
		SG(sapi_headers).http_status_line = NULL;
	}
	if (SG(sapi_headers).mimetype) {
		efree(SG(sapi_headers).mimetype);
		SG(sapi_headers).mimetype = NULL;
	}
	SG(sapi_headers).send_default_content_type = 1;
	if (Z_TYPE(SG(callback_func)) != IS_UNDEF) {
		zval_ptr_dtor(&SG(callback_func));
		ZVAL_UNDEF(&SG(callback_func));
		SG(fci_cache) = empty_fcall_info_cache;
	}
	SG(headers_sent) = 0;
	if (OG(output_start_filename)) {
		zend_string_release(OG(output_start_filename));
		OG(output_start_filename) = NULL;
	}
	OG(output_start_lineno) = 0;
	FERRY_G(sent_status) = 0;
	if (FERRY_G(sent_reason)) {
		zend_string_release(FERRY_G(sent_reason));
		FERRY_G(sent_reason) = NULL;
	}
	ferry_forget_uploads();
}

void ferry_sapi_rshutdown(void)
{
	ferry_class_cache_reset();
	zval_ptr_dtor(&FERRY_G(plain_result));
	ZVAL_UNDEF(&FERRY_G(plain_result));
	/* A worker that dies mid-request must not let sapi_deactivate() unlink the server's files. */
	ferry_forget_uploads();
	if (FERRY_G(sent_reason)) {
		zend_string_release(FERRY_G(sent_reason));
		FERRY_G(sent_reason) = NULL;
	}
	FERRY_G(in_request) = false;
}

ZEND_FUNCTION(ferry_request_begin)
{
	ZEND_PARSE_PARAMETERS_NONE();
	ferry_request_start();
}

void ferry_request_start(void)
{
	ferry_session_reset();
	ferry_reset_response();
	FERRY_G(in_request) = true;
	/* php_request_startup() adds it under FPM with the same ini. */
	if (PG(expose_php)) {
		/* What sapi_add_header() ends with for this line on a list just emptied, without
		 * its parsing, which cost more than the rest of the request boundary. */
		sapi_header_struct h;
		h.header_len = sizeof(SAPI_PHP_VERSION_HEADER) - 1;
		h.header = estrndup(SAPI_PHP_VERSION_HEADER, h.header_len);
		zend_llist_add_element(&SG(sapi_headers).headers, &h);
	}
}

ZEND_FUNCTION(ferry_in_request)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_BOOL(FERRY_G(in_request));
}

static bool is_header(const char *name, size_t len, const char *want, size_t want_len)
{
	return len == want_len && strncasecmp(name, want, len) == 0;
}

/* "404 Some Phrase" -> 404 and "Some Phrase"; 0 when it does not start with a status code. */
static int parse_status(const char *p, size_t len, const char **reason, size_t *reason_len)
{
	*reason = NULL;
	*reason_len = 0;
	if (len < 3 || !isdigit((unsigned char) p[0]) || !isdigit((unsigned char) p[1]) || !isdigit((unsigned char) p[2])) {
		return 0;
	}
	if (len > 3 && p[3] != ' ') {
		return 0;
	}
	int code = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
	if (len > 4) {
		*reason = p + 4;
		*reason_len = len - 4;
	}
	return code;
}

typedef struct {
	const char *name;
	size_t name_len;
	const char *value;
	size_t value_len;
} ferry_header_line;

/* Splits "Name: value" as FPM + nginx read it; false for lines without a name. */
static bool split_header(const sapi_header_struct *h, ferry_header_line *out)
{
	if (h->header_len == 0) {
		return false;
	}
	const char *colon = memchr(h->header, ':', h->header_len);
	if (!colon) {
		return false;
	}
	size_t name_len = (size_t) (colon - h->header);
	while (name_len > 0 && (h->header[name_len - 1] == ' ' || h->header[name_len - 1] == '\t')) {
		name_len--;
	}
	if (name_len == 0) {
		return false;
	}
	const char *value = colon + 1;
	const char *end = h->header + h->header_len;
	while (value < end && (*value == ' ' || *value == '\t')) {
		value++;
	}
	out->name = h->header;
	out->name_len = name_len;
	out->value = value;
	out->value_len = (size_t) (end - value);
	return true;
}

/*
 * The status FPM reports to nginx (fpm_main.c's sapi_cgi_send_headers): a status line
 * given with header('HTTP/1.1 404 Phrase') when the code is not 200, else the first
 * "Status:" header, else http_response_code().
 */
static int final_status(bool *from_status_header, zend_string **reason)
{
	int code = FERRY_G(sent_status) ? FERRY_G(sent_status) : 200;
	const char *phrase;
	size_t phrase_len;

	*from_status_header = false;
	*reason = NULL;
	if (code != 200 && FERRY_G(sent_reason)) {
		const char *line = ZSTR_VAL(FERRY_G(sent_reason));
		const char *space = strchr(line, ' ');
		if (space && space - line >= 5 && strncasecmp(line, "HTTP/", 5) == 0) {
			int parsed = parse_status(space + 1, strlen(space + 1), &phrase, &phrase_len);
			if (parsed) {
				if (phrase_len) {
					*reason = zend_string_init(phrase, phrase_len, 0);
				}
				return parsed;
			}
			return code;
		}
	}
	zend_llist_position pos;
	for (sapi_header_struct *h = zend_llist_get_first_ex(&SG(sapi_headers).headers, &pos); h;
		h = zend_llist_get_next_ex(&SG(sapi_headers).headers, &pos)) {
		ferry_header_line line;
		if (split_header(h, &line) && is_header(line.name, line.name_len, "Status", 6)) {
			int parsed = parse_status(line.value, line.value_len, &phrase, &phrase_len);
			*from_status_header = true;
			if (!parsed) {
				return code;
			}
			if (phrase_len) {
				*reason = zend_string_init(phrase, phrase_len, 0);
			}
			return parsed;
		}
	}
	return code;
}

/* The line expose_php adds at request_begin(), as "X-Powered-By" and its value. */
static bool is_expose_php_line(const ferry_header_line *line)
{
	static const char value[] = "PHP/" PHP_VERSION;
	return is_header(line->name, line->name_len, "X-Powered-By", 12)
		&& line->value_len == sizeof(value) - 1 && memcmp(line->value, value, sizeof(value) - 1) == 0;
}

static void build_result(zval *result, bool powered_by)
{
	bool from_status_header;
	zend_string *reason;
	int status = final_status(&from_status_header, &reason);
	zval headers;
	HashTable names; /* lower-case name => the name as first written, the key in headers */
	zend_llist_position pos;

	/* Allocated at the first header kept: most handler requests have none. */
	ZVAL_EMPTY_ARRAY(&headers);
	bool any = false;
	for (sapi_header_struct *h = zend_llist_get_first_ex(&SG(sapi_headers).headers, &pos); h;
		h = zend_llist_get_next_ex(&SG(sapi_headers).headers, &pos)) {
		ferry_header_line line;
		if (!split_header(h, &line) || is_header(line.name, line.name_len, "Status", 6)) {
			continue;
		}
		/* FPM drops it on a 304, which has no body to describe. */
		if (status == 304 && is_header(line.name, line.name_len, "Content-Type", 12)) {
			continue;
		}
		if (!powered_by && is_expose_php_line(&line)) {
			continue;
		}
		if (!any) {
			any = true;
			array_init(&headers);
			zend_hash_init(&names, 8, NULL, ZVAL_PTR_DTOR, 0);
		}
		zend_string *given = zend_string_init(line.name, line.name_len, 0);
		zend_string *lower = zend_string_tolower(given);
		zend_string_release(given);
		zval *known = zend_hash_find(&names, lower);
		zval *values;
		if (known) {
			values = zend_hash_find(Z_ARRVAL(headers), Z_STR_P(known));
		} else {
			zval name, list;
			ZVAL_STRINGL(&name, line.name, line.name_len);
			array_init(&list);
			values = zend_hash_update(Z_ARRVAL(headers), Z_STR(name), &list);
			zend_hash_add_new(&names, lower, &name);
		}
		zend_string_release(lower);
		add_next_index_stringl(values, line.value, line.value_len);
	}
	if (any) {
		zend_hash_destroy(&names);
	} else if (status == 200 && !reason) {
		/* The usual answer, the same every time: one array shared until the worker ends. */
		if (Z_TYPE(FERRY_G(plain_result)) != IS_ARRAY) {
			array_init_size(&FERRY_G(plain_result), 2);
			add_assoc_long(&FERRY_G(plain_result), "status", 200);
			add_assoc_zval(&FERRY_G(plain_result), "headers", &headers);
		}
		ZVAL_COPY(result, &FERRY_G(plain_result));
		return;
	}

	array_init_size(result, 3);
	add_assoc_long(result, "status", status);
	if (reason) {
		add_assoc_str(result, "reason", reason);
	}
	add_assoc_zval(result, "headers", &headers);
}

/* request_end()'s work; *result stays undefined when an exception was thrown. */
static void request_finish(zval *result, bool default_content_type, bool powered_by)
{
	ZVAL_UNDEF(result);
	/* What FPM does at the end of every request: the default Content-Type and the
	 * header_register_callback() callback happen in sapi_send_headers(). */
	if (!SG(headers_sent)) {
		if (!default_content_type) {
			SG(sapi_headers).send_default_content_type = 0;
		}
		sapi_send_headers();
	}
	if (!EG(exception)) {
		build_result(result, powered_by);
	}
	/* After the headers: a session write may fail and must not leave the state dirty. */
	if (!EG(exception)) {
		ferry_session_reset();
	}
	ferry_reset_response();
	FERRY_G(in_request) = false;
	if (EG(exception)) {
		zval_ptr_dtor(result);
		ZVAL_UNDEF(result);
	}
}

bool ferry_request_finish(zval *result)
{
	request_finish(result, false, false);
	return Z_TYPE_P(result) == IS_ARRAY && Z_TYPE(FERRY_G(plain_result)) == IS_ARRAY
		&& Z_ARR_P(result) == Z_ARR(FERRY_G(plain_result));
}

ZEND_FUNCTION(ferry_request_end)
{
	bool default_content_type = true;
	bool powered_by = true;

	ZEND_PARSE_PARAMETERS_START(0, 2)
		Z_PARAM_OPTIONAL
		Z_PARAM_BOOL(default_content_type)
		Z_PARAM_BOOL(powered_by)
	ZEND_PARSE_PARAMETERS_END();

	if (!FERRY_G(in_request)) {
		zend_throw_error(NULL, "Ferry\\Ext\\request_end(): no request in progress, call request_begin() first");
		RETURN_THROWS();
	}
	request_finish(return_value, default_content_type, powered_by);
	if (EG(exception)) {
		RETURN_THROWS();
	}
}
