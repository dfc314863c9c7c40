/*
 * Ferry\Ext\msgpack_unpack_message(BufferUnpacker $u, string $data): mixed is
 * BufferUnpacker::unpackMessage() on the C codec, state included, in one call. On small
 * Tarantool replies the PHP method around msgpack_unpack() (its property reads and writes,
 * eight arguments) cost as much as the decoding, so the C function reads the unpacker's
 * settings and writes its state through the property slots itself.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_closures.h"
#include "zend_exceptions.h"
#include "zend_interfaces.h"
#include "php_ferry.h"
#include "ferry_msgpack.h"

enum { U_BUF, U_OFF, U_LEN, U_BASE, U_NEED, U_DEPTH, U_MAX_DEPTH, U_EXT, U_FLAGS, U_NATIVE, U_COUNT };

static const struct {
	const char *name;
	uint32_t type; /* the declared type; 0: not checked (read only, checked when read) */
} props[U_COUNT] = {
	[U_BUF] = {"buf", MAY_BE_STRING}, [U_OFF] = {"off", MAY_BE_LONG}, [U_LEN] = {"len", MAY_BE_LONG},
	[U_BASE] = {"base", MAY_BE_LONG}, [U_NEED] = {"need", MAY_BE_LONG}, [U_DEPTH] = {"depth", MAY_BE_LONG},
	[U_MAX_DEPTH] = {"maxDepth", MAY_BE_LONG}, [U_EXT] = {"ext", MAY_BE_ARRAY}, [U_FLAGS] = {"nativeFlags", MAY_BE_LONG},
	[U_NATIVE] = {"native", 0},
};

static const uint32_t *slots(zend_class_entry *ce)
{
	_Static_assert(U_COUNT <= 10, "php_ferry.h: unpacker_offsets too small");
	if (FERRY_G(unpacker_ce) == ce) {
		return FERRY_G(unpacker_offsets);
	}
	bool ok = zend_string_equals_literal(ce->name, "Ferry\\MsgPack\\BufferUnpacker");
	for (int i = 0; ok && i < U_COUNT; i++) {
		zend_property_info *info = zend_hash_str_find_ptr(&ce->properties_info, props[i].name, strlen(props[i].name));
		/* the slots written below must hold exactly the type written there */
		ok = info && !(info->flags & (ZEND_ACC_STATIC | ZEND_ACC_READONLY))
			&& (props[i].type == 0 || (!ZEND_TYPE_IS_COMPLEX(info->type) && ZEND_TYPE_PURE_MASK(info->type) == props[i].type));
		if (ok) {
			FERRY_G(unpacker_offsets)[i] = info->offset;
		}
	}
	if (!ok) {
		zend_throw_error(NULL, "Ferry\\Ext\\msgpack_unpack_message(): %s is not php/msgpack's BufferUnpacker this "
			"extension was built for", ZSTR_VAL(ce->name));
		return NULL;
	}
	FERRY_G(unpacker_ce) = ce;
	return FERRY_G(unpacker_offsets);
}

static inline zval *slot(zend_object *u, const uint32_t *s, int which)
{
	return OBJ_PROP(u, s[which]);
}

static void set_long(zend_object *u, const uint32_t *s, int which, zend_long v)
{
	zval *p = slot(u, s, which);
	zval_ptr_dtor(p); /* an int or undefined: nothing to free, but harmless */
	ZVAL_LONG(p, v);
}

static void set_str(zend_object *u, const uint32_t *s, int which, zend_string *v)
{
	zval *p = slot(u, s, which);
	zval old;
	ZVAL_COPY_VALUE(&old, p);
	ZVAL_STR_COPY(p, v);
	zval_ptr_dtor(&old);
}

static bool is_a(zend_object *ex, const char *name, size_t len)
{
	zend_string *n = zend_string_init(name, len, 0);
	zend_class_entry *ce = zend_lookup_class_ex(n, NULL, ZEND_FETCH_CLASS_NO_AUTOLOAD);
	zend_string_release(n);
	return ce && instanceof_function(ex->ce, ce);
}

ZEND_FUNCTION(ferry_msgpack_unpack_message)
{
	zend_object *u;
	zend_string *data;

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_OBJ(u)
		Z_PARAM_STR(data)
	ZEND_PARSE_PARAMETERS_END();

	const uint32_t *s = slots(u->ce);
	if (!s) {
		RETURN_THROWS();
	}
	zval *native = slot(u, s, U_NATIVE), *max_depth = slot(u, s, U_MAX_DEPTH), *flags = slot(u, s, U_FLAGS);
	zval *ext = slot(u, s, U_EXT);
	if (Z_TYPE_P(native) != IS_OBJECT || Z_OBJCE_P(native) != zend_ce_closure || Z_TYPE_P(max_depth) != IS_LONG
		|| Z_LVAL_P(max_depth) < 1 || Z_LVAL_P(max_depth) > FERRY_MSGPACK_MAX_DEPTH || Z_TYPE_P(flags) != IS_LONG
		|| Z_TYPE_P(ext) != IS_ARRAY) {
		zend_throw_error(NULL, "Ferry\\Ext\\msgpack_unpack_message(): this unpacker does not run the C codec");
		RETURN_THROWS();
	}
	size_t len = ZSTR_LEN(data);
	/* as unpackMessage(): the buffer is the message, from offset 0, before any callback reads it */
	set_str(u, s, U_BUF, data);
	set_long(u, s, U_LEN, (zend_long) len);
	set_long(u, s, U_BASE, 0);
	set_long(u, s, U_DEPTH, 0);
	/* copies: the callback may replace the properties these point into */
	zval cb;
	ZVAL_COPY(&cb, native);
	HashTable *exts = Z_ARRVAL_P(ext);
	GC_TRY_ADDREF(exts);
	fmp_dec_opts o = {.base = 0, .flags = Z_LVAL_P(flags), .max_depth = Z_LVAL_P(max_depth), .ext = exts, .cb = &cb};
	size_t pos = 0;
	zend_long missing = -1;
	zend_result r = ferry_msgpack_decode(data, len, &pos, &o, return_value, &missing);
	zend_array_release(exts);
	zval_ptr_dtor(&cb);
	if (r != SUCCESS) {
		zend_object *ex = EG(exception);
		/* unpackMessage() rewinds on a MsgPackException and lets any other one pass as it is */
		if (ex && is_a(ex, ZEND_STRL("Ferry\\MsgPack\\MsgPackException"))) {
			if (missing < 0 && is_a(ex, ZEND_STRL("Ferry\\MsgPack\\InsufficientData"))) {
				zval m;
				zend_call_method_with_0_params(ex, ex->ce, NULL, "getmissing", &m);
				missing = Z_TYPE(m) == IS_LONG ? Z_LVAL(m) : 0;
				zval_ptr_dtor(&m);
			}
			set_long(u, s, U_OFF, 0);
			set_long(u, s, U_NEED, missing >= 0 ? (zend_long) len + missing : 0);
		}
		RETURN_THROWS();
	}
	set_long(u, s, U_NEED, 0);
	if (pos == len) {
		set_long(u, s, U_OFF, (zend_long) pos);
		return;
	}
	/* trailing bytes: the buffer is emptied (reset()) and the message refused */
	zval_ptr_dtor(return_value);
	ZVAL_UNDEF(return_value);
	set_str(u, s, U_BUF, ZSTR_EMPTY_ALLOC());
	set_long(u, s, U_OFF, 0);
	set_long(u, s, U_LEN, 0);
	set_long(u, s, U_BASE, 0);
	set_long(u, s, U_DEPTH, 0);
	zend_string *reason = zend_strpprintf(0, "%zu trailing bytes after the value", len - pos);
	ferry_msgpack_throw("MsgPackException", reason, (zend_long) pos, -1);
	zend_string_release(reason);
	RETURN_THROWS();
}
