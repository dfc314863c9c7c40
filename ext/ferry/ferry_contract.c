/*
 * ext/ferry's side of the worker contract (ferry_contract.h): it checks the version and
 * finds the slots of WorkerSession's public typed properties once per loop call, so the
 * loops read and write them per request by offset, as fast as before, and a renamed or
 * retyped property is an Error at the start, never a misplaced value.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "php_ferry.h"
#include "ferry_contract.h"

#define prop ferry_contract_prop

void ferry_contract_minit(int module_number)
{
	REGISTER_NS_LONG_CONSTANT(PHP_FERRY_NS, "CONTRACT_VERSION", FERRY_CONTRACT_VERSION, CONST_CS | CONST_PERSISTENT);
}

bool ferry_contract_prop(const char *fn, zend_class_entry *ce, const char *name, uint32_t type, uint32_t *offset)
{
	zend_property_info *info = zend_hash_str_find_ptr(&ce->properties_info, name, strlen(name));
	if (!info || !(info->flags & ZEND_ACC_PUBLIC) || (info->flags & ZEND_ACC_STATIC) || !ZEND_TYPE_IS_SET(info->type)
		|| (type != 0 && (ZEND_TYPE_IS_COMPLEX(info->type) || ZEND_TYPE_PURE_MASK(info->type) != type))
		|| (type == 0 && !ZEND_TYPE_IS_COMPLEX(info->type))) {
		zend_throw_error(NULL, "Ferry\\Ext\\%s(): %s has no public property $%s of the type worker contract version %d "
			"declares", fn, ZSTR_VAL(ce->name), name, FERRY_CONTRACT_VERSION);
		return false;
	}
	*offset = info->offset;
	return true;
}

zval *ferry_contract_static(const char *fn, zend_class_entry *ce, const char *name)
{
	zend_property_info *info = zend_hash_str_find_ptr(&ce->properties_info, name, strlen(name));
	if (!info || !(info->flags & ZEND_ACC_PUBLIC) || !(info->flags & ZEND_ACC_STATIC) || !ZEND_TYPE_IS_SET(info->type)) {
		zend_throw_error(NULL, "Ferry\\Ext\\%s(): %s has no public static typed property $%s, which worker contract "
			"version %d declares", fn, ZSTR_VAL(ce->name), name, FERRY_CONTRACT_VERSION);
		return NULL;
	}
	zend_string *n = zend_string_init(name, strlen(name), 0);
	zval *slot = zend_std_get_static_property(ce, n, BP_VAR_W);
	zend_string_release(n);
	return slot;
}

/* A public instance method of the contract taking `args` arguments; NULL with an Error thrown. */
static zend_function *method(const char *fn, zend_class_entry *ce, const char *lc, const char *name, uint32_t args)
{
	zend_function *f = zend_hash_str_find_ptr(&ce->function_table, lc, strlen(lc));
	if (!f || !(f->common.fn_flags & ZEND_ACC_PUBLIC) || (f->common.fn_flags & ZEND_ACC_STATIC)
		|| f->common.required_num_args != args) {
		zend_throw_error(NULL, "Ferry\\Ext\\%s(): %s has no public %s() of worker contract version %d", fn,
			ZSTR_VAL(ce->name), name, FERRY_CONTRACT_VERSION);
		return NULL;
	}
	return f;
}

bool ferry_contract_bind(const char *fn, zend_object *session, ferry_contract *C)
{
	zend_class_entry *ce = session->ce;
	zend_class_constant *version = zend_hash_str_find_ptr(CE_CONSTANTS_TABLE(ce), "CONTRACT_VERSION", sizeof("CONTRACT_VERSION") - 1);
	zval *value = version ? &version->value : NULL;
	if (!value || Z_TYPE_P(value) != IS_LONG || Z_LVAL_P(value) != FERRY_CONTRACT_VERSION) {
		if (value && Z_TYPE_P(value) == IS_LONG) {
			zend_throw_error(NULL, "Ferry\\Ext\\%s(): php/worker speaks worker contract version " ZEND_LONG_FMT
				" (%s::CONTRACT_VERSION) and this ext/ferry version %d: load the ext/ferry built from the same "
				"Ferry release as php/worker", fn, Z_LVAL_P(value), ZSTR_VAL(ce->name), FERRY_CONTRACT_VERSION);
		} else {
			zend_throw_error(NULL, "Ferry\\Ext\\%s(): %s declares no worker contract version (an integer "
				"CONTRACT_VERSION) and this ext/ferry speaks version %d: load the ext/ferry built from the same "
				"Ferry release as php/worker", fn, ZSTR_VAL(ce->name), FERRY_CONTRACT_VERSION);
		}
		return false;
	}
	if (!prop(fn, ce, "stopping", MAY_BE_BOOL, &C->stopping) || !prop(fn, ce, "closed", MAY_BE_BOOL, &C->closed)
		|| !prop(fn, ce, "outbox", MAY_BE_STRING, &C->outbox) || !prop(fn, ce, "streams", MAY_BE_ARRAY, &C->streams)
		|| !prop(fn, ce, "terminateHooks", MAY_BE_ARRAY, &C->terminate)
		|| !prop(fn, ce, "jobsSinceWaiting", MAY_BE_BOOL, &C->since) || !prop(fn, ce, "reportsWaits", MAY_BE_BOOL, &C->reports)
		|| !prop(fn, ce, "running", MAY_BE_LONG | MAY_BE_NULL, &C->running)
		|| !prop(fn, ce, "fiberRunning", 0, &C->fiber_running)
		|| !prop(fn, ce, "kept", MAY_BE_ARRAY, &C->kept) || !prop(fn, ce, "resetHooks", MAY_BE_ARRAY, &C->reset)
		|| !prop(fn, ce, "capture", 0, &C->capture) || !prop(fn, ce, "sapiOutput", MAY_BE_BOOL, &C->sapi_output)
		|| !prop(fn, ce, "maxPayload", MAY_BE_LONG, &C->max_payload)
		|| !prop(fn, ce, "readAhead", MAY_BE_STRING | MAY_BE_NULL, &C->ahead)
		|| !prop(fn, ce, "readAheadOffset", MAY_BE_LONG, &C->ahead_offset)
		|| !prop(fn, ce, "readAheadEnd", MAY_BE_LONG, &C->ahead_end)
		|| !prop(fn, ce, "handed", MAY_BE_ARRAY | MAY_BE_NULL, &C->handed)) {
		return false;
	}
	C->reset_fn = method(fn, ce, "runresethooks", "runResetHooks", 0);
	C->after_fn = C->reset_fn ? method(fn, ce, "afternativeanswer", "afterNativeAnswer", 3) : NULL;
	return C->after_fn != NULL;
}
