/*
 * Ferry\Ext\request_context(): the gateway's request context (docs/protocol.md) as the
 * array unserialize($ctx, ['allowed_classes' => false, 'max_depth' => 16]) returns, or
 * null for anything outside the subset ferry_ser.c reads, so the caller falls back to
 * unserialize() and its errors.
 * One file, past 400 lines: the builder callbacks and the field table are one state
 * machine over ferry_ser.c's events, read top to bottom.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_bitset.h"
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
	if (count == 0) {
		ZVAL_EMPTY_ARRAY(&arr); /* as unserialize() does; nothing is stored in it */
	} else {
		array_init_size(&arr, count);
	}
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
 * (fromContext() throws its ProtocolException), a field given twice, cookies PHP's rules
 * would rewrite, a body spooled to a file. The properties are found by name and type: a
 * Request of another shape is an Error, never a misplaced value.
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

/* fromContext()'s defaults for the string fields an absent key leaves. */
static const struct {
	const char *s;
	uint8_t len;
} string_defaults[RP_COUNT] = {
	[RP_URI] = {"/", 1}, [RP_PATH] = {"/", 1}, [RP_QUERY] = {"", 0}, [RP_PROTOCOL] = {"HTTP/1.1", 8},
	[RP_REMOTE] = {"", 0}, [RP_HOST] = {"", 0}, [RP_SCHEME] = {"http", 4},
};

/* The RP_ field a top-level key of the context names, -1 for any other key. */
static int context_field(const char *p, size_t len)
{
	/* constant sizes: compiled to a compare or two, no call */
#define KEY_IS(k) (memcmp(p, k, sizeof(k) - 1) == 0)
	switch (len) {
		case 3: return KEY_IS("uri") ? RP_URI : -1;
		case 4: return KEY_IS("path") ? RP_PATH : KEY_IS("host") ? RP_HOST : KEY_IS("form") ? RP_FORM : -1;
		case 5: return KEY_IS("query") ? RP_QUERY : KEY_IS("files") ? RP_UPLOADS : -1;
		case 6: return KEY_IS("method") ? RP_METHOD : KEY_IS("scheme") ? RP_SCHEME : KEY_IS("parsed") ? RP_PARSED : -1;
		case 7: return KEY_IS("headers") ? RP_HEADERS : KEY_IS("cookies") ? RP_COOKIES : -1;
		case 8: return KEY_IS("protocol") ? RP_PROTOCOL : -1;
		case 9: return KEY_IS("body_file") ? RP_BODY_FILE : -1;
		case 11: return KEY_IS("remote_addr") ? RP_REMOTE : -1;
		default: return -1;
	}
#undef KEY_IS
}

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
		/* Public, as the worker contract wants (README.md, "Worker contract"): request_read() sets them in place. */
		ok = info && (info->flags & ZEND_ACC_PUBLIC) && !(info->flags & ZEND_ACC_STATIC) && !ZEND_TYPE_IS_COMPLEX(info->type)
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

/* What Request::decodeCookies() returns unchanged: string values, no name with "[" (a nested cookie's path). */
static bool cookies_as_sent(HashTable *cookies)
{
	zend_string *key;
	zval *value;
	ZEND_HASH_FOREACH_STR_KEY_VAL(cookies, key, value) {
		if (key && memchr(ZSTR_VAL(key), '[', ZSTR_LEN(key)) != NULL) {
			return false;
		}
		if (Z_TYPE_P(value) != IS_STRING) {
			return false;
		}
	} ZEND_HASH_FOREACH_END();
	return true;
}

static int skip_open(void *ctx, uint32_t count) { return 0; }
static int skip_close(void *ctx) { return 0; }
static int skip_str(void *ctx, const char *p, size_t len) { return 0; }
static int skip_int(void *ctx, int64_t v) { return 0; }
static int skip_bool(void *ctx, int v) { return 0; }

/* A value no field takes: read, as the subset requires, and dropped. */
static const ferry_ser_sink skip_sink = {skip_open, skip_close, skip_str, skip_int, skip_str, skip_int, skip_bool};

/*
 * The context read straight into the Request's property slots, only the array fields'
 * values built as arrays. False leaves the request to the PHP path: the input outside
 * the subset, a field of another type (fromContext() throws), a field given twice
 * (unserialize() keeps the last), a body in a file, cookies decodeCookies() would change.
 * *seen gets a bit per RP_ field written.
 */
static bool read_context(const uint8_t *p, const uint8_t *end, zend_object *obj, const uint32_t *offsets,
	builder *nested, uint32_t *seen)
{
	uint32_t count;
	ferry_ser_status status;
	if (!(p = ferry_ser_array_open(p, end, &count))) {
		return false;
	}
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *next;
		const char *s;
		size_t len;
		int64_t index;
		int field = -1;
		if ((next = ferry_ser_string(p, end, &s, &len)) != NULL) {
			field = context_field(s, len);
		} else if (!(next = ferry_ser_int(p, end, &index))) {
			return false;
		}
		p = next;
		if (field < 0) {
			if (!(p = ferry_ser_value(p, end, FERRY_CONTEXT_MAX_DEPTH - 1, &skip_sink, NULL, &status))) {
				return false;
			}
			continue;
		}
		if ((*seen & (1u << field)) || field == RP_BODY_FILE) {
			return false;
		}
		*seen |= 1u << field;
		zval *slot = OBJ_PROP(obj, offsets[field]);
		int flag;
		switch (request_props[field].type) {
			case MAY_BE_STRING:
				if (!(p = ferry_ser_string(p, end, &s, &len))) {
					return false;
				}
				ZVAL_STRINGL_FAST(slot, s, len);
				break;
			case MAY_BE_BOOL:
				if (!(p = ferry_ser_bool(p, end, &flag))) {
					return false;
				}
				ZVAL_BOOL(slot, flag);
				break;
			default:
				/* an array: ferry_ser_value() would take a scalar too */
				if (end - p < 2 || p[0] != 'a') {
					return false;
				}
				nested->root = slot;
				if (!(p = ferry_ser_value(p, end, FERRY_CONTEXT_MAX_DEPTH - 1, &builder_sink, nested, &status))
					|| (field == RP_COOKIES && !cookies_as_sent(Z_ARRVAL_P(slot)))) {
					return false;
				}
				break;
		}
	}
	return end - p == 1 && *p == '}';
}

/* 1: *out is the Request; 0: the PHP path must take it (out untouched); -1: an Error was thrown. */
int ferry_request_build(const char *context, size_t context_len, zend_string *body, zval *out)
{
	uint32_t offsets[RP_COUNT];
	zend_class_entry *ce = find_request_class(offsets);
	if (!ce) {
		return -1;
	}
	/* Built in place: a request left to the PHP path costs an object freed unseen. */
	zval request;
	if (object_init_ex(&request, ce) != SUCCESS) {
		return -1;
	}
	zend_object *obj = Z_OBJ(request);
	builder nested;
	nested.depth = 0;
	nested.key = NULL;
	uint32_t seen = 0;
	bool ok = read_context((const uint8_t *) context, (const uint8_t *) context + context_len,
		obj, offsets, &nested, &seen);
	if (nested.key) {
		zend_string_release(nested.key);
	}
	if (!ok || !(seen & (1u << RP_METHOD))) {
		/* No destructor for an object nobody saw; the slots not written hold nothing to release. */
		zend_object_store_ctor_failed(obj);
		zval_ptr_dtor(&request);
		return 0;
	}
	uint32_t absent = ~seen & ((1u << RP_COUNT) - 1) & ~(1u << RP_BODY | 1u << RP_TIME | 1u << RP_BODY_FILE);
	while (absent) {
		int i = zend_ulong_ntz(absent);
		absent &= absent - 1;
		zval *slot = OBJ_PROP(obj, offsets[i]);
		switch (request_props[i].type) {
			case MAY_BE_STRING:
				ZVAL_STRINGL_FAST(slot, string_defaults[i].s, string_defaults[i].len);
				break;
			case MAY_BE_ARRAY:
				ZVAL_EMPTY_ARRAY(slot);
				break;
			default:
				ZVAL_FALSE(slot); /* parsed */
				break;
		}
	}
	ZVAL_STR_COPY(OBJ_PROP(obj, offsets[RP_BODY]), body);
	struct timeval tv;
	gettimeofday(&tv, NULL);
	/* microtime(true), which the constructor call is given */
	ZVAL_DOUBLE(OBJ_PROP(obj, offsets[RP_TIME]), (double) (tv.tv_sec + tv.tv_usec / 1000000.00));
	ZVAL_NULL(OBJ_PROP(obj, offsets[RP_BODY_FILE]));
	ZVAL_COPY_VALUE(out, &request);
	return 1;
}

ZEND_FUNCTION(ferry_request_read)
{
	zend_string *context;
	zend_string *body;

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_STR(context)
		Z_PARAM_STR(body)
	ZEND_PARSE_PARAMETERS_END();

	int built = ferry_request_build(ZSTR_VAL(context), ZSTR_LEN(context), body, return_value);
	if (built < 0) {
		RETURN_THROWS();
	}
	if (built == 0) {
		RETURN_NULL();
	}
}
