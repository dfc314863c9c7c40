/*
 * Ferry\Ext\request_context(): the gateway's request context (docs/protocol.md) as the
 * array unserialize($ctx, ['allowed_classes' => false, 'max_depth' => 16]) returns, or
 * null for anything outside the subset ferry_ser.c reads, so the caller falls back to
 * unserialize() and its errors.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "php_ferry.h"
#include "ferry_ser.h"

#define FERRY_CONTEXT_MAX_DEPTH 16

typedef struct {
	zval *root;
	HashTable *stack[FERRY_CONTEXT_MAX_DEPTH];
	unsigned depth;
	/* the key read for the next value: a string (owned) or an index */
	zend_string *key;
	zend_ulong index;
} builder;

/* unserialize() turns "5" into the index 5, as an array literal does. */
static zval *store(builder *b, zval *value)
{
	HashTable *ht = b->stack[b->depth - 1];
	zval *slot;
	if (b->key) {
		slot = zend_symtable_update(ht, b->key, value);
		zend_string_release(b->key);
		b->key = NULL;
	} else {
		slot = zend_hash_index_update(ht, b->index, value);
	}
	return slot;
}

static int on_open(void *ctx, uint32_t count)
{
	builder *b = ctx;
	zval arr;
	if (b->depth == FERRY_CONTEXT_MAX_DEPTH) {
		return 1; /* ferry_ser.c keeps to max_depth: not reached */
	}
	array_init_size(&arr, count);
	if (b->depth == 0) {
		ZVAL_COPY_VALUE(b->root, &arr);
		b->stack[b->depth++] = Z_ARRVAL(arr);
		return 0;
	}
	zval *slot = store(b, &arr);
	b->stack[b->depth++] = Z_ARRVAL_P(slot);
	return 0;
}

static int on_close(void *ctx)
{
	builder *b = ctx;
	b->depth--;
	return 0;
}

static int on_key_str(void *ctx, const char *p, size_t len)
{
	builder *b = ctx;
	/* The context's own keys and common header names are interned by the scripts that read them. */
	b->key = zend_string_init_existing_interned(p, len, 0);
	return 0;
}

static int on_key_int(void *ctx, int64_t v)
{
	builder *b = ctx;
	b->index = (zend_ulong) (zend_long) v;
	return 0;
}

static int on_val_str(void *ctx, const char *p, size_t len)
{
	builder *b = ctx;
	zval v;
	if (len == 0) {
		ZVAL_EMPTY_STRING(&v);
	} else if (len == 1) {
		ZVAL_CHAR(&v, (unsigned char) p[0]);
	} else {
		ZVAL_STRINGL(&v, p, len);
	}
	store(b, &v);
	return 0;
}

static int on_val_int(void *ctx, int64_t v)
{
	builder *b = ctx;
	zval z;
	ZVAL_LONG(&z, (zend_long) v);
	store(b, &z);
	return 0;
}

static int on_val_bool(void *ctx, int v)
{
	builder *b = ctx;
	zval z;
	ZVAL_BOOL(&z, v);
	store(b, &z);
	return 0;
}

static const ferry_ser_sink builder_sink = {
	on_open, on_close, on_key_str, on_key_int, on_val_str, on_val_int, on_val_bool
};

ZEND_FUNCTION(ferry_request_context)
{
	zend_string *context;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(context)
	ZEND_PARSE_PARAMETERS_END();

	builder b = {0};
	zval result;
	ZVAL_UNDEF(&result);
	b.root = &result;
	ferry_ser_status status = ferry_ser_read_array((const uint8_t *) ZSTR_VAL(context), ZSTR_LEN(context),
		FERRY_CONTEXT_MAX_DEPTH, &builder_sink, &b);
	if (b.key) {
		zend_string_release(b.key);
	}
	if (status != FERRY_SER_OK) {
		zval_ptr_dtor(&result);
		RETURN_NULL();
	}
	RETURN_COPY_VALUE(&result);
}

/*
 * Ferry\Ext\request_read(): Request::fromContext() for the usual request, the object built
 * here instead of through a 16-argument constructor call. Null whenever the PHP path has
 * something to do or to say: a context outside the subset, a field of another type
 * (fromContext() throws its ProtocolException), cookies PHP's rules would rewrite, a body
 * spooled to a file. The properties are found by name and type: a Request of another
 * shape is an Error, never a misplaced value.
 */
typedef struct {
	const char *name;
	uint32_t type;
} request_prop;

enum {
	RP_METHOD, RP_URI, RP_PATH, RP_QUERY, RP_PROTOCOL, RP_REMOTE, RP_HOST, RP_HEADERS, RP_COOKIES, RP_BODY,
	RP_FORM, RP_UPLOADS, RP_PARSED, RP_TIME, RP_SCHEME, RP_BODY_FILE, RP_COUNT
};

static const request_prop request_props[RP_COUNT] = {
	{"method", MAY_BE_STRING}, {"uri", MAY_BE_STRING}, {"path", MAY_BE_STRING}, {"queryString", MAY_BE_STRING},
	{"protocol", MAY_BE_STRING}, {"remoteAddr", MAY_BE_STRING}, {"host", MAY_BE_STRING},
	{"headers", MAY_BE_ARRAY}, {"cookies", MAY_BE_ARRAY}, {"body", MAY_BE_STRING}, {"form", MAY_BE_ARRAY},
	{"uploads", MAY_BE_ARRAY}, {"parsed", MAY_BE_BOOL}, {"time", MAY_BE_DOUBLE}, {"scheme", MAY_BE_STRING},
	{"bodyFile", MAY_BE_STRING | MAY_BE_NULL},
};

/* The context key for each property read from it, and its default when absent. */
typedef struct {
	int prop;
	const char *key;
	const char *default_string; /* NULL: an empty array, or false for parsed */
} request_field;

static const request_field request_fields[] = {
	{RP_URI, "uri", "/"}, {RP_PATH, "path", "/"}, {RP_QUERY, "query", ""}, {RP_PROTOCOL, "protocol", "HTTP/1.1"},
	{RP_REMOTE, "remote_addr", ""}, {RP_HOST, "host", ""}, {RP_HEADERS, "headers", NULL}, {RP_COOKIES, "cookies", NULL},
	{RP_FORM, "form", NULL}, {RP_UPLOADS, "files", NULL}, {RP_PARSED, "parsed", NULL}, {RP_SCHEME, "scheme", "http"},
};

void ferry_class_cache_reset(void)
{
	FERRY_G(request_ce) = NULL;
	FERRY_G(frame_ce) = NULL;
	FERRY_G(unpacker_ce) = NULL;
}

static zend_class_entry *find_request_class(uint32_t offsets[RP_COUNT])
{
	_Static_assert(RP_COUNT <= 16, "php_ferry.h: request_offsets too small");
	if (FERRY_G(request_ce)) {
		/* A class, once declared, stays as it is until the request ends. */
		memcpy(offsets, FERRY_G(request_offsets), sizeof(uint32_t) * RP_COUNT);
		return FERRY_G(request_ce);
	}
	zend_string *name = zend_string_init("Ferry\\Worker\\Http\\Request", sizeof("Ferry\\Worker\\Http\\Request") - 1, 0);
	zend_class_entry *ce = zend_lookup_class(name);
	zend_string_release(name);
	if (!ce) {
		if (!EG(exception)) {
			zend_throw_error(NULL, "Ferry\\Ext\\request_read(): class Ferry\\Worker\\Http\\Request not found");
		}
		return NULL;
	}
	bool ok = !(ce->ce_flags & (ZEND_ACC_INTERFACE | ZEND_ACC_TRAIT | ZEND_ACC_EXPLICIT_ABSTRACT_CLASS | ZEND_ACC_ENUM));
	for (int i = 0; ok && i < RP_COUNT; i++) {
		zend_property_info *info = zend_hash_str_find_ptr(&ce->properties_info, request_props[i].name,
			strlen(request_props[i].name));
		ok = info && !(info->flags & ZEND_ACC_STATIC) && !ZEND_TYPE_IS_COMPLEX(info->type)
			&& ZEND_TYPE_PURE_MASK(info->type) == request_props[i].type;
		if (ok) {
			offsets[i] = info->offset;
		}
	}
	if (!ok) {
		zend_throw_error(NULL, "Ferry\\Ext\\request_read(): Ferry\\Worker\\Http\\Request is not the class this "
			"extension was built for");
		return NULL;
	}
	FERRY_G(request_ce) = ce;
	memcpy(FERRY_G(request_offsets), offsets, sizeof(uint32_t) * RP_COUNT);
	return ce;
}

/* What Request::decodeCookies() returns unchanged: no name with ".", "[" or " ", string values without "%". */
static bool cookies_as_sent(HashTable *cookies)
{
	zend_string *key;
	zval *value;
	ZEND_HASH_FOREACH_STR_KEY_VAL(cookies, key, value) {
		if (key && strpbrk(ZSTR_VAL(key), ".[ ") != NULL) {
			return false;
		}
		if (key && memchr(ZSTR_VAL(key), '\0', ZSTR_LEN(key)) != NULL) {
			return false; /* strpbrk() would stop at the NUL where PHP's does not */
		}
		if (Z_TYPE_P(value) != IS_STRING || memchr(Z_STRVAL_P(value), '%', Z_STRLEN_P(value)) != NULL) {
			return false;
		}
	} ZEND_HASH_FOREACH_END();
	return true;
}

/* The value for field f, or false when the PHP path must take the request. */
static bool request_value(HashTable *c, const request_field *f, zval *out)
{
	zval *v = zend_hash_str_find(c, f->key, strlen(f->key));
	uint32_t type = request_props[f->prop].type;
	if (!v) {
		if (f->default_string) {
			ZVAL_STRING(out, f->default_string);
		} else if (type == MAY_BE_BOOL) {
			ZVAL_FALSE(out);
		} else {
			ZVAL_EMPTY_ARRAY(out);
		}
		return true;
	}
	bool ok = (type == MAY_BE_STRING && Z_TYPE_P(v) == IS_STRING)
		|| (type == MAY_BE_ARRAY && Z_TYPE_P(v) == IS_ARRAY)
		|| (type == MAY_BE_BOOL && (Z_TYPE_P(v) == IS_TRUE || Z_TYPE_P(v) == IS_FALSE));
	if (!ok || (f->prop == RP_COOKIES && !cookies_as_sent(Z_ARRVAL_P(v)))) {
		return false;
	}
	ZVAL_COPY(out, v);
	return true;
}

ZEND_FUNCTION(ferry_request_read)
{
	zend_string *context;
	zend_string *body;
	uint32_t offsets[RP_COUNT];

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_STR(context)
		Z_PARAM_STR(body)
	ZEND_PARSE_PARAMETERS_END();

	zend_class_entry *ce = find_request_class(offsets);
	if (!ce) {
		RETURN_THROWS();
	}
	builder b = {0};
	zval c;
	ZVAL_UNDEF(&c);
	b.root = &c;
	ferry_ser_status status = ferry_ser_read_array((const uint8_t *) ZSTR_VAL(context), ZSTR_LEN(context),
		FERRY_CONTEXT_MAX_DEPTH, &builder_sink, &b);
	if (b.key) {
		zend_string_release(b.key);
	}
	if (status != FERRY_SER_OK) {
		zval_ptr_dtor(&c);
		RETURN_NULL();
	}
	HashTable *ht = Z_ARRVAL(c);
	zval *method = zend_hash_str_find(ht, "method", sizeof("method") - 1);
	if (!method || Z_TYPE_P(method) != IS_STRING || zend_hash_str_exists(ht, "body_file", sizeof("body_file") - 1)) {
		zval_ptr_dtor(&c);
		RETURN_NULL();
	}
	zval values[RP_COUNT];
	size_t n = sizeof(request_fields) / sizeof(request_fields[0]);
	size_t done = 0;
	for (; done < n; done++) {
		if (!request_value(ht, &request_fields[done], &values[request_fields[done].prop])) {
			break;
		}
	}
	if (done < n) {
		for (size_t i = 0; i < done; i++) {
			zval_ptr_dtor(&values[request_fields[i].prop]);
		}
		zval_ptr_dtor(&c);
		RETURN_NULL();
	}
	ZVAL_COPY(&values[RP_METHOD], method);
	ZVAL_STR_COPY(&values[RP_BODY], body);
	struct timeval tv;
	gettimeofday(&tv, NULL);
	/* microtime(true), which the constructor call is given */
	ZVAL_DOUBLE(&values[RP_TIME], (double) (tv.tv_sec + tv.tv_usec / 1000000.00));
	ZVAL_NULL(&values[RP_BODY_FILE]);
	zval_ptr_dtor(&c);

	object_init_ex(return_value, ce);
	zend_object *obj = Z_OBJ_P(return_value);
	for (int i = 0; i < RP_COUNT; i++) {
		zval *slot = OBJ_PROP(obj, offsets[i]);
		/* Uninitialised typed slots: nothing to release. */
		ZVAL_COPY_VALUE(slot, &values[i]);
	}
}
