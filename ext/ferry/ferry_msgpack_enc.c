/*
 * Ferry\Ext\msgpack_pack(): php/msgpack's Packer::pack() in C for null, bool, int, float,
 * string and arrays. Anything else (objects, resources) goes to a callback into the
 * Packer, which applies its extensions and raises its exceptions, so the bytes and errors
 * are those of the pure-PHP packer for every value.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_smart_str.h"
#include "zend_closures.h"
#include "ferry_msgpack.h"

#define PACKER_MAX_DEPTH 512

typedef struct {
	smart_str s;
	zend_long flags;
	zval *cb;      /* Closure(mixed $value, int $depth): string */
	HashTable *classes; /* Packer's class => Extension map: php/msgpack's own are packed here */
	bool cache_ready;   /* cache zeroed: only once an object needs it */
	fmp_ext_cache cache;
	bool cb_ready; /* fci/fcc set up: only once a value needs them */
	zend_fcall_info fci;
	zend_fcall_info_cache fcc;
} fmp_enc;

static zend_result enc_value(fmp_enc *e, zval *v, zend_long depth);

static inline void put1(fmp_enc *e, uint8_t c)
{
	smart_str_appendc(&e->s, (char) c);
}

static inline void put_be(fmp_enc *e, uint8_t code, uint64_t v, int n)
{
	char *p = smart_str_extend(&e->s, (size_t) n + 1);
	p[0] = (char) code;
	for (int i = n; i >= 1; i--) {
		p[i] = (char) (v & 0xff);
		v >>= 8;
	}
}

static void enc_int(fmp_enc *e, zend_long v)
{
	if (v >= 0) {
		if (v < 0x80) {
			put1(e, (uint8_t) v);
		} else if (v <= 0xff) {
			put_be(e, 0xcc, (uint64_t) v, 1);
		} else if (v <= 0xffff) {
			put_be(e, 0xcd, (uint64_t) v, 2);
		} else if (v <= 0xffffffffLL) {
			put_be(e, 0xce, (uint64_t) v, 4);
		} else {
			put_be(e, 0xcf, (uint64_t) v, 8);
		}
	} else if (v >= -0x20) {
		put1(e, (uint8_t) (v & 0xff));
	} else if (v >= -0x80) {
		put_be(e, 0xd0, (uint64_t) v, 1);
	} else if (v >= -0x8000) {
		put_be(e, 0xd1, (uint64_t) v, 2);
	} else if (v >= -0x80000000LL) {
		put_be(e, 0xd2, (uint64_t) v, 4);
	} else {
		put_be(e, 0xd3, (uint64_t) v, 8);
	}
}

static zend_result too_long(size_t n)
{
	zend_string *r = zend_strpprintf(0, "length %zu does not fit in 32 bits", n);
	ferry_msgpack_throw("MsgPackException", r, -1, -1);
	zend_string_release(r);
	return FAILURE;
}

static zend_result enc_str(fmp_enc *e, const char *s, size_t n)
{
	if (e->flags & FERRY_MP_FORCE_BIN) {
		if (n <= 0xff) {
			put_be(e, 0xc4, n, 1);
		} else if (n <= 0xffff) {
			put_be(e, 0xc5, n, 2);
		} else if (n <= 0xffffffffu) {
			put_be(e, 0xc6, n, 4);
		} else {
			return too_long(n);
		}
	} else if (n < 32) {
		put1(e, (uint8_t) (0xa0 | n));
	} else if (n <= 0xff) {
		put_be(e, 0xd9, n, 1);
	} else if (n <= 0xffff) {
		put_be(e, 0xda, n, 2);
	} else if (n <= 0xffffffffu) {
		put_be(e, 0xdb, n, 4);
	} else {
		return too_long(n);
	}
	smart_str_appendl(&e->s, s, n);
	return SUCCESS;
}

static void enc_header(fmp_enc *e, uint32_t n, bool map)
{
	if (n < 16) {
		put1(e, (uint8_t) ((map ? 0x80 : 0x90) | n));
	} else if (n <= 0xffff) {
		put_be(e, map ? 0xde : 0xdc, n, 2);
	} else {
		put_be(e, map ? 0xdf : 0xdd, n, 4);
	}
}

/* Packer::packArray() / packMap(): `depth` open containers around this one. */
static zend_result enc_array(fmp_enc *e, HashTable *ht, bool map, zend_long depth)
{
	if (depth + 1 > PACKER_MAX_DEPTH) {
		zend_string *r = zend_strpprintf(0, "nesting deeper than %d levels (recursive array?)", PACKER_MAX_DEPTH);
		ferry_msgpack_throw("MsgPackException", r, -1, -1);
		zend_string_release(r);
		return FAILURE;
	}
	uint32_t n = zend_hash_num_elements(ht);
	enc_header(e, n, map);
	zend_ulong idx;
	zend_string *key;
	zval *v;
	zend_result r = SUCCESS;
	/* A callback (an extension's pack()) may change this array through a reference:
	 * holding a reference makes PHP separate it instead, as foreach does. */
	GC_TRY_ADDREF(ht);
	ZEND_HASH_FOREACH_KEY_VAL_IND(ht, idx, key, v) {
		if (map) {
			if (key) {
				if (enc_str(e, ZSTR_VAL(key), ZSTR_LEN(key)) != SUCCESS) {
					r = FAILURE;
					break;
				}
			} else {
				enc_int(e, (zend_long) idx);
			}
		}
		if (enc_value(e, v, depth + 1) != SUCCESS) {
			r = FAILURE;
			break;
		}
	} ZEND_HASH_FOREACH_END();
	zend_array_release(ht);
	return r;
}

static zend_result enc_callback(fmp_enc *e, zval *v, zend_long depth)
{
	if (!e->cb) {
		zend_string *t = ferry_msgpack_debug_type(v);
		zend_string *r = zend_strpprintf(0, "cannot pack a value of type %s (no callback)", ZSTR_VAL(t));
		zend_string_release(t);
		ferry_msgpack_throw("MsgPackException", r, -1, -1);
		zend_string_release(r);
		return FAILURE;
	}
	if (!e->cb_ready) {
		if (zend_fcall_info_init(e->cb, 0, &e->fci, &e->fcc, NULL, NULL) != SUCCESS) {
			return FAILURE;
		}
		e->cb_ready = true;
	}
	zval args[2], rv;
	ZVAL_COPY_VALUE(&args[0], v);
	ZVAL_LONG(&args[1], depth);
	e->fci.retval = &rv;
	e->fci.params = args;
	e->fci.param_count = 2;
	if (zend_call_function(&e->fci, &e->fcc) != SUCCESS || EG(exception)) {
		return FAILURE;
	}
	if (Z_TYPE(rv) != IS_STRING) {
		zval_ptr_dtor(&rv);
		zend_type_error("msgpack_pack(): the callback must return a string");
		return FAILURE;
	}
	smart_str_append(&e->s, Z_STR(rv));
	zval_ptr_dtor(&rv);
	return SUCCESS;
}

static zend_result enc_value(fmp_enc *e, zval *v, zend_long depth)
{
	ZVAL_DEREF(v);
	switch (Z_TYPE_P(v)) {
	case IS_LONG:
		enc_int(e, Z_LVAL_P(v));
		return SUCCESS;
	case IS_STRING:
		return enc_str(e, Z_STRVAL_P(v), Z_STRLEN_P(v));
	case IS_ARRAY: {
		bool map = (e->flags & FERRY_MP_FORCE_MAP)
			|| (!(e->flags & FERRY_MP_FORCE_ARR) && !zend_array_is_list(Z_ARRVAL_P(v)));
		return enc_array(e, Z_ARRVAL_P(v), map, depth);
	}
	case IS_NULL:
		put1(e, 0xc0);
		return SUCCESS;
	case IS_FALSE:
		put1(e, 0xc2);
		return SUCCESS;
	case IS_TRUE:
		put1(e, 0xc3);
		return SUCCESS;
	case IS_DOUBLE:
		if (e->flags & FERRY_MP_FLOAT32) {
			float f = (float) Z_DVAL_P(v);
			uint32_t bits;
			memcpy(&bits, &f, 4);
			put_be(e, 0xca, bits, 4);
		} else {
			uint64_t bits;
			double d = Z_DVAL_P(v);
			memcpy(&bits, &d, 8);
			put_be(e, 0xcb, bits, 8);
		}
		return SUCCESS;
	case IS_OBJECT:
		if (e->classes && !e->cache_ready) {
			memset(&e->cache, 0, sizeof e->cache);
			e->cache_ready = true;
		}
		if (e->classes && ferry_msgpack_ext_pack(&e->cache, e->classes, Z_OBJ_P(v), &e->s)) {
			return SUCCESS;
		}
		return enc_callback(e, v, depth);
	default:
		return enc_callback(e, v, depth);
	}
}

/* Ferry\Ext\msgpack_pack(mixed $value, int $flags = 0, int $depth = 0, ?Closure $other = null,
 *     array $classes = []): string */
ZEND_FUNCTION(ferry_msgpack_pack)
{
	zval *value;
	zend_long flags = 0, depth = 0;
	zval *cb = NULL;
	HashTable *classes = NULL;

	ZEND_PARSE_PARAMETERS_START(1, 5)
		Z_PARAM_ZVAL(value)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(flags)
		Z_PARAM_LONG(depth)
		Z_PARAM_OBJECT_OF_CLASS_OR_NULL(cb, zend_ce_closure)
		Z_PARAM_ARRAY_HT(classes)
	ZEND_PARSE_PARAMETERS_END();

	if (depth < 0 || depth > PACKER_MAX_DEPTH) {
		zend_argument_value_error(3, "must be between 0 and %d", PACKER_MAX_DEPTH);
		RETURN_THROWS();
	}
	/* Field by field, as in the decoder: the ext class cache is zeroed only if an object needs it. */
	fmp_enc e;
	e.s.s = NULL;
	e.s.a = 0;
	e.flags = flags;
	e.cb = cb;
	e.cb_ready = false;
	e.classes = classes && zend_hash_num_elements(classes) ? classes : NULL;
	e.cache_ready = false;
	zend_result r;
	ZVAL_DEREF(value);
	if ((flags & (FERRY_MP_TOP_ARRAY | FERRY_MP_TOP_MAP)) && Z_TYPE_P(value) == IS_ARRAY) {
		r = enc_array(&e, Z_ARRVAL_P(value), (flags & FERRY_MP_TOP_MAP) != 0, depth);
	} else {
		r = enc_value(&e, value, depth);
	}
	if (r != SUCCESS) {
		smart_str_free(&e.s);
		RETURN_THROWS();
	}
	if (!e.s.s) {
		RETURN_EMPTY_STRING();
	}
	RETURN_STR(smart_str_extract(&e.s));
}
