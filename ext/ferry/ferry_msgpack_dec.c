/*
 * Ferry\Ext\msgpack_unpack(): php/msgpack's BufferUnpacker::unpack() in C. Each check,
 * its order, the exception class, offset and reason mirror src/Decoder.php, because the
 * PHP package uses this function in place of its own decoder and both must give the same
 * answer for every input. Ext values with a registered PHP extension are decoded by a
 * callback into the unpacker, so custom extensions behave exactly as in pure PHP.
 * It stays one file, over 400 lines, so that it reads side by side with Decoder.php.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "zend_closures.h"
#include "ferry_msgpack.h"
#include "ferry_msgpack_read.h"

typedef struct {
	const uint8_t *buf;
	size_t len;
	zend_long base;
	zend_long max_depth;
	int bigint;
	bool bin_object;
	HashTable *ext;            /* registered ext types (keys) */
	zval *cb;                  /* Closure(int $at, int $head, int $length, int $depth): mixed */
	bool cb_ready;             /* fci/fcc set up: only once an ext value needs them */
	zend_fcall_info fci;
	zend_fcall_info_cache fcc;
	zend_long missing;         /* of the InsufficientData this decoder threw, -1 if none */
	bool classes_ready;        /* classes zeroed: only once an ext value needs them */
	fmp_ext_cache classes;
} fmp_dec;

static zend_result dec_value(fmp_dec *d, size_t *off, zval *rv, zend_long depth, bool key);

static void throw_short(fmp_dec *d, size_t at, uint64_t need, const char *what, bool with_len, uint64_t n)
{
	zend_string *reason = with_len
		? zend_strpprintf(0, "truncated %s of %" PRIu64 " bytes: %" PRIu64 " more bytes needed", what, n, (uint64_t) at + need - d->len)
		: zend_strpprintf(0, "truncated %s: %" PRIu64 " more bytes needed", what, (uint64_t) at + need - d->len);
	d->missing = (zend_long) ((uint64_t) at + need - d->len);
	ferry_msgpack_throw("InsufficientData", reason, d->base + (zend_long) at, d->missing);
	zend_string_release(reason);
}

static void throw_at(fmp_dec *d, size_t at, zend_string *reason)
{
	ferry_msgpack_throw("MsgPackException", reason, d->base + (zend_long) at, -1);
	zend_string_release(reason);
}

static void throw_key(fmp_dec *d, size_t at, const char *type)
{
	throw_at(d, at, zend_strpprintf(0, "map key of type %s is not supported (only int, str and bin keys)", type));
}

static zend_result make_string(fmp_dec *d, zval *rv, size_t from, uint32_t n)
{
	if (n == 0) {
		ZVAL_EMPTY_STRING(rv);
	} else if (n == 1) {
		ZVAL_CHAR(rv, d->buf[from]);
	} else {
		ZVAL_STRINGL_FAST(rv, (const char *) d->buf + from, n);
	}
	return SUCCESS;
}

static zend_result bigint(fmp_dec *d, zval *rv, uint64_t u, bool key)
{
	char s[24];
	int n = snprintf(s, sizeof s, "%" PRIu64, u);
	if (key || d->bigint == 0) {
		ZVAL_STRINGL(rv, s, n);
		return SUCCESS;
	}
	if (d->bigint == 2) {
		ZVAL_DOUBLE(rv, (double) u);
		return SUCCESS;
	}
	zval fn, arg;
	ZVAL_STRING(&fn, "gmp_init");
	ZVAL_STRINGL(&arg, s, n);
	zend_result r = call_user_function(NULL, NULL, &fn, rv, 1, &arg);
	zval_ptr_dtor(&fn);
	zval_ptr_dtor(&arg);
	return r == SUCCESS && !EG(exception) ? SUCCESS : FAILURE;
}

static zend_result ext_value(fmp_dec *d, size_t at, fmp_item *it, zval *rv, zend_long depth)
{
	zval *handler = d->ext ? zend_hash_index_find(d->ext, it->ext_type) : NULL;
	if (handler && !d->classes_ready) {
		memset(&d->classes, 0, sizeof d->classes);
		d->classes_ready = true;
	}
	if (handler && ferry_msgpack_ext_native(&d->classes, handler, it->ext_type, d->buf + at + it->head, it->len, rv)) {
		return SUCCESS;
	}
	if (handler && d->cb) {
		if (!d->cb_ready) {
			if (zend_fcall_info_init(d->cb, 0, &d->fci, &d->fcc, NULL, NULL) != SUCCESS) {
				return FAILURE;
			}
			d->cb_ready = true;
		}
		zval args[4];
		ZVAL_LONG(&args[0], (zend_long) at);
		ZVAL_LONG(&args[1], it->head);
		ZVAL_LONG(&args[2], it->len);
		ZVAL_LONG(&args[3], depth);
		d->fci.retval = rv;
		d->fci.params = args;
		d->fci.param_count = 4;
		if (zend_call_function(&d->fci, &d->fcc) != SUCCESS || EG(exception)) {
			zval_ptr_dtor(rv);
			ZVAL_UNDEF(rv);
			return FAILURE;
		}
		return SUCCESS;
	}
	zval args[2];
	ZVAL_LONG(&args[0], it->ext_type);
	make_string(d, &args[1], at + it->head, it->len);
	zend_result r = ferry_msgpack_new(rv, "Ext\\RawExt", 2, args);
	zval_ptr_dtor(&args[1]);
	return r;
}

/* The container whose type byte is at `at`; its elements start at *off. */
static zend_result dec_container(fmp_dec *d, size_t *off, zval *rv, uint32_t n, bool map, size_t at, zend_long depth)
{
	uint64_t count = map ? (uint64_t) n * 2 : n;
	if (count > d->len - *off) {
		/* every element takes at least one byte: impossible counts fail before any loop */
		uint64_t missing = (uint64_t) *off + count - d->len;
		zend_string *reason = zend_strpprintf(0, "truncated %s of %u %s: %" PRIu64 " more bytes needed",
			map ? "map" : "array", n, map ? "entries" : "elements", missing);
		d->missing = (zend_long) missing;
		ferry_msgpack_throw("InsufficientData", reason, d->base + (zend_long) *off, d->missing);
		zend_string_release(reason);
		return FAILURE;
	}
	if (depth > d->max_depth) {
		throw_at(d, at, zend_strpprintf(0, "nesting deeper than " ZEND_LONG_FMT " levels", d->max_depth));
		return FAILURE;
	}
	if (!map) {
		zend_result r = SUCCESS;
		array_init_size(rv, n);
		zend_hash_real_init_packed(Z_ARRVAL_P(rv));
		/* on failure the fill stops at the last decoded element, so the array stays valid */
		ZEND_HASH_FILL_PACKED(Z_ARRVAL_P(rv)) {
			for (uint32_t i = 0; i < n; i++) {
				if (dec_value(d, off, __fill_val, depth, false) != SUCCESS) {
					r = FAILURE;
					break;
				}
				ZEND_HASH_FILL_NEXT();
			}
		} ZEND_HASH_FILL_END();
		return r;
	}
	array_init_size(rv, n);
	for (uint32_t i = 0; i < n; i++) {
		zval k, v;
		size_t kat = *off;
		if (dec_value(d, off, &k, depth, true) != SUCCESS) {
			return FAILURE;
		}
		if (Z_TYPE(k) != IS_LONG && Z_TYPE(k) != IS_STRING) {
			/* Decoder::mapKey(): a Bin (BIN_AS_OBJECT) keys by its bytes, a GMP by its digits */
			/* both classes are final: a name comparison is instanceof */
			if (Z_TYPE(k) == IS_OBJECT && zend_string_equals_literal(Z_OBJCE(k)->name, "Ferry\\MsgPack\\Type\\Bin")) {
				zval tmp, *data = zend_read_property(Z_OBJCE(k), Z_OBJ(k), "data", 4, 1, &tmp);
				zval copy;
				ZVAL_COPY(&copy, data);
				zval_ptr_dtor(&k);
				ZVAL_COPY_VALUE(&k, &copy);
			} else if (Z_TYPE(k) == IS_OBJECT && zend_string_equals_literal(Z_OBJCE(k)->name, "GMP")) {
				zval fn, s;
				ZVAL_STRING(&fn, "gmp_strval");
				zend_result r = call_user_function(NULL, NULL, &fn, &s, 1, &k);
				zval_ptr_dtor(&fn);
				zval_ptr_dtor(&k);
				if (r != SUCCESS || EG(exception)) {
					return FAILURE;
				}
				ZVAL_COPY_VALUE(&k, &s);
			} else {
				zend_string *t = ferry_msgpack_debug_type(&k);
				zval_ptr_dtor(&k);
				throw_key(d, kat, ZSTR_VAL(t));
				zend_string_release(t);
				return FAILURE;
			}
		}
		if (dec_value(d, off, &v, depth, false) != SUCCESS) {
			zval_ptr_dtor(&k);
			return FAILURE;
		}
		if (Z_TYPE(k) == IS_LONG) {
			zend_hash_index_update(Z_ARRVAL_P(rv), Z_LVAL(k), &v);
		} else {
			zend_symtable_update(Z_ARRVAL_P(rv), Z_STR(k), &v);
			zval_ptr_dtor(&k);
		}
	}
	return SUCCESS;
}

/* One element of a container at nesting level `depth`; `key`: it is a map key. On
 * FAILURE rv is undefined or already released. */
static zend_result dec_value(fmp_dec *d, size_t *off, zval *rv, zend_long depth, bool key)
{
	size_t at = *off;
	fmp_item it;
	if (EXPECTED(at < d->len)) {
		/* the commonest items of a tuple, without the general reader */
		uint8_t c = d->buf[at];
		if (c < 0x80) {
			ZVAL_LONG(rv, c);
			*off = at + 1;
			return SUCCESS;
		}
		if ((c & 0xe0) == 0xa0 && at + 1 + (c & 0x1f) <= d->len) {
			make_string(d, rv, at + 1, c & 0x1f);
			*off = at + 1 + (c & 0x1f);
			return SUCCESS;
		}
		if (c >= 0xe0) {
			ZVAL_LONG(rv, (zend_long) c - 0x100);
			*off = at + 1;
			return SUCCESS;
		}
		if (c == 0xc0) {
			ZVAL_NULL(rv);
			*off = at + 1;
			return SUCCESS;
		}
	}
	ZVAL_UNDEF(rv);
	if (at >= d->len) {
		throw_short(d, at, 1, "value", false, 0);
		return FAILURE;
	}
	switch (fmp_read(d->buf, d->len, at, &it)) {
	case FMP_OK:
		break;
	case FMP_SHORT:
		throw_short(d, at, it.need, it.what, it.with_len, it.len);
		return FAILURE;
	default:
		throw_at(d, at, zend_string_init("invalid type byte 0xc1 (never used)", 35, 0));
		return FAILURE;
	}
	switch (it.kind) {
	case FMP_NIL: ZVAL_NULL(rv); break;
	case FMP_FALSE: ZVAL_FALSE(rv); break;
	case FMP_TRUE: ZVAL_TRUE(rv); break;
	case FMP_INT: ZVAL_LONG(rv, (zend_long) it.v.i); break;
	case FMP_FLOAT: ZVAL_DOUBLE(rv, it.v.d); break;
	case FMP_UINT:
		if (it.v.u > (uint64_t) ZEND_LONG_MAX) {
			if (bigint(d, rv, it.v.u, key) != SUCCESS) {
				return FAILURE;
			}
		} else {
			ZVAL_LONG(rv, (zend_long) it.v.u);
		}
		break;
	case FMP_STR:
		make_string(d, rv, at + it.head, it.len);
		break;
	case FMP_BIN:
		make_string(d, rv, at + it.head, it.len);
		if (d->bin_object) {
			zval s;
			ZVAL_COPY_VALUE(&s, rv);
			zend_result r = ferry_msgpack_new(rv, "Type\\Bin", 1, &s);
			zval_ptr_dtor(&s);
			if (r != SUCCESS) {
				return FAILURE;
			}
		}
		break;
	case FMP_EXT:
		*off = at + it.head + it.len;
		return ext_value(d, at, &it, rv, depth);
	case FMP_ARRAY:
	case FMP_MAP:
		*off = at + it.head;
		if (it.len == 0) {
			ZVAL_EMPTY_ARRAY(rv);
			return SUCCESS;
		}
		if (key) {
			throw_key(d, at, it.kind == FMP_MAP ? "map" : "array");
			return FAILURE;
		}
		if (dec_container(d, off, rv, it.len, it.kind == FMP_MAP, at, depth + 1) != SUCCESS) {
			zval_ptr_dtor(rv);
			ZVAL_UNDEF(rv);
			return FAILURE;
		}
		return SUCCESS;
	}
	*off = at + it.head + ((it.kind == FMP_STR || it.kind == FMP_BIN) ? it.len : 0);
	return SUCCESS;
}

zend_result ferry_msgpack_decode(zend_string *buf, size_t len, size_t *pos, const fmp_dec_opts *o, zval *rv, zend_long *missing)
{
	/* Field by field: an initializer would zero the ext class cache and the fcall info,
	 * hundreds of bytes, on every call (a tenth of a small message's cost); they are set
	 * when an ext value first needs them. */
	fmp_dec d;
	d.buf = (const uint8_t *) ZSTR_VAL(buf);
	d.len = len;
	d.base = o->base;
	d.max_depth = o->max_depth;
	d.bigint = (int) (o->flags & FERRY_MP_BIGINT_MASK);
	d.bin_object = (o->flags & FERRY_MP_BIN_OBJECT) != 0;
	d.ext = o->ext;
	d.cb = o->cb;
	d.cb_ready = false;
	d.classes_ready = false;
	d.missing = -1;
	/* the callback may drop the caller's reference to the buffer */
	zend_string_addref(buf);
	size_t at = *pos, p = at;
	zend_result r;
	uint8_t c = p < d.len ? d.buf[p] : 0;
	if (p < d.len && c >= 0x80 && c <= 0x9f) {
		/* BufferUnpacker::unpack(): a fix container at the top is level 1 */
		p++;
		if ((c & 0x0f) == 0) {
			ZVAL_EMPTY_ARRAY(rv);
			r = SUCCESS;
		} else {
			r = dec_container(&d, &p, rv, c & 0x0f, c < 0x90, at, 1);
			if (r != SUCCESS) {
				zval_ptr_dtor(rv);
				ZVAL_UNDEF(rv);
			}
		}
	} else {
		r = dec_value(&d, &p, rv, 0, false);
	}
	zend_string_release(buf);
	if (missing) {
		*missing = d.missing;
	}
	if (r == SUCCESS) {
		*pos = p;
	}
	return r;
}

/* Ferry\Ext\msgpack_unpack(string $buffer, int &$offset, int $length, int $base = 0,
 *     int $flags = 0, int $maxDepth = 512, array $extensions = [], ?Closure $ext = null): mixed */
ZEND_FUNCTION(ferry_msgpack_unpack)
{
	zend_string *buf;
	zval *zoff_ref;
	zend_long len, base = 0, flags = 0, max_depth = 512;
	HashTable *ext = NULL;
	zval *cb = NULL;

	ZEND_PARSE_PARAMETERS_START(3, 8)
		Z_PARAM_STR(buf)
		Z_PARAM_ZVAL(zoff_ref)
		Z_PARAM_LONG(len)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(base)
		Z_PARAM_LONG(flags)
		Z_PARAM_LONG(max_depth)
		Z_PARAM_ARRAY_HT(ext)
		Z_PARAM_OBJECT_OF_CLASS_OR_NULL(cb, zend_ce_closure)
	ZEND_PARSE_PARAMETERS_END();

	zval *zoff = zoff_ref;
	ZVAL_DEREF(zoff);
	if (Z_TYPE_P(zoff) != IS_LONG) {
		zend_argument_type_error(2, "must be of type int, %s given", zend_zval_type_name(zoff));
		RETURN_THROWS();
	}
	zend_long off = Z_LVAL_P(zoff);
	if (len < 0 || (size_t) len > ZSTR_LEN(buf)) {
		zend_argument_value_error(3, "must be between 0 and the buffer's length");
		RETURN_THROWS();
	}
	if (off < 0 || off > len) {
		zend_argument_value_error(2, "must be between 0 and $length");
		RETURN_THROWS();
	}
	if (max_depth < 1 || max_depth > FERRY_MSGPACK_MAX_DEPTH) {
		zend_argument_value_error(6, "must be between 1 and %d", FERRY_MSGPACK_MAX_DEPTH);
		RETURN_THROWS();
	}
	if (base < 0) {
		zend_argument_value_error(4, "must be at least 0");
		RETURN_THROWS();
	}
	fmp_dec_opts o = {.base = base, .flags = flags, .max_depth = max_depth, .ext = ext, .cb = cb};
	size_t pos = (size_t) off;
	if (ferry_msgpack_decode(buf, (size_t) len, &pos, &o, return_value, NULL) != SUCCESS) {
		RETURN_THROWS();
	}
	ZEND_TRY_ASSIGN_REF_LONG(zoff_ref, (zend_long) pos);
}
