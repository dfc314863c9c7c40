/* Helpers shared by the msgpack codec: php/msgpack's classes built from C. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "ferry_msgpack.h"

static zend_class_entry *lookup(const char *cls)
{
	zend_string *name = zend_strpprintf(0, "Ferry\\MsgPack\\%s", cls);
	zend_class_entry *ce = zend_lookup_class(name);
	if (!ce && !EG(exception)) {
		zend_throw_error(NULL, "Class %s not found (php/msgpack's autoloader is not registered)", ZSTR_VAL(name));
	}
	zend_string_release(name);
	return ce;
}

zend_result ferry_msgpack_new(zval *rv, const char *cls, uint32_t argc, zval *args)
{
	zend_class_entry *ce = lookup(cls);
	if (!ce || object_init_ex(rv, ce) != SUCCESS) {
		ZVAL_UNDEF(rv);
		return FAILURE;
	}
	if (ce->constructor) {
		zend_call_known_instance_method(ce->constructor, Z_OBJ_P(rv), NULL, argc, args);
		if (EG(exception)) {
			zval_ptr_dtor(rv);
			ZVAL_UNDEF(rv);
			return FAILURE;
		}
	}
	return SUCCESS;
}

void ferry_msgpack_throw(const char *cls, zend_string *reason, zend_long offset, zend_long missing)
{
	zval ex, args[3];
	ZVAL_STR(&args[0], reason);
	ZVAL_LONG(&args[1], offset);
	ZVAL_LONG(&args[2], missing);
	if (ferry_msgpack_new(&ex, cls, missing >= 0 ? 3 : (offset >= 0 ? 2 : 1), args) == SUCCESS) {
		zend_throw_exception_object(&ex);
	}
}

zend_string *ferry_msgpack_debug_type(zval *v)
{
	zval fn, rv;
	ZVAL_STRING(&fn, "get_debug_type");
	if (call_user_function(NULL, NULL, &fn, &rv, 1, v) == SUCCESS && Z_TYPE(rv) == IS_STRING) {
		zval_ptr_dtor(&fn);
		return Z_STR(rv);
	}
	zval_ptr_dtor(&fn);
	return zend_string_init("unknown", 7, 0);
}

/* Read by php/msgpack (ini_get) when it builds a Packer or BufferUnpacker: on, they keep
 * the pure-PHP code even though the C codec is loaded, e.g. to compare the two. */
static const zend_ini_entry_def ferry_msgpack_ini[] = {
	ZEND_INI_ENTRY("ferry.msgpack_php_only", "0", ZEND_INI_ALL, NULL)
	{ NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0 }
};

void ferry_msgpack_minit(int module_number)
{
	zend_register_ini_entries(ferry_msgpack_ini, module_number);
}

void ferry_msgpack_mshutdown(int module_number)
{
	zend_unregister_ini_entries(module_number);
}
