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
