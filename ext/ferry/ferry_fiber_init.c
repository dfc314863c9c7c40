/*
 * What Ferry\Ext\fiber_serve() (ferry_fiber.c) finds out about php/worker's classes once
 * per call (the WorkerSession through the worker contract, ferry_contract.c), and the
 * small lookups both halves of the Fiber-mode hot path share.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "main/php_streams.h"
#include "zend_exceptions.h"
#include "php_ferry.h"
#include "ferry_fiber.h"
#include "ferry_job_common.h"
#include "ferry_contract.h"

void ferry_fiber_call(zend_object *object, const char *method, zval *retval, uint32_t argc, zval *args)
{
	zend_function *fn = zend_hash_str_find_ptr_lc(&object->ce->function_table, method, strlen(method));
	if (!fn) {
		zend_throw_error(NULL, "Ferry\\Ext\\fiber_serve(): %s has no method %s()", ZSTR_VAL(object->ce->name), method);
		ZVAL_UNDEF(retval);
		return;
	}
	zend_call_known_instance_method(fn, object, retval, argc, args);
}

static bool empty_array(zval *v)
{
	return Z_TYPE_P(v) == IS_ARRAY && zend_hash_num_elements(Z_ARRVAL_P(v)) == 0;
}

bool ferry_fiber_worker_idle(ferry_fibers *L)
{
	zend_object *s = L->session;
	zval *outbox = OBJ_PROP(s, L->C.outbox);
	return Z_TYPE_P(OBJ_PROP(s, L->C.stopping)) == IS_FALSE && Z_TYPE_P(OBJ_PROP(s, L->C.closed)) == IS_FALSE
		&& Z_TYPE_P(outbox) == IS_STRING && Z_STRLEN_P(outbox) == 0 && empty_array(OBJ_PROP(s, L->C.terminate))
		&& empty_array(OBJ_PROP(s, L->C.reset));
}

bool ferry_fiber_init(ferry_fibers *L)
{
	if (!ferry_contract_bind("fiber_serve", L->session, &L->C)) {
		return false;
	}
	L->max_payload = Z_LVAL_P(OBJ_PROP(L->session, L->C.max_payload));
	zval *capture = OBJ_PROP(L->session, L->C.capture);
	if (Z_TYPE_P(capture) != IS_OBJECT) {
		zend_throw_error(NULL, "Ferry\\Ext\\fiber_serve(): the worker has no output capture");
		return false;
	}
	L->capture = Z_OBJ_P(capture);
	zend_class_entry *job_ce = ferry_find_class("fiber_serve", "Ferry\\Worker\\Job");
	if (!job_ce || !ferry_contract_prop("fiber_serve", L->capture->ce, "level", MAY_BE_LONG, &L->c_level)
		|| !ferry_contract_prop("fiber_serve", L->capture->ce, "refusals", MAY_BE_LONG, &L->c_refusals)
		|| !ferry_contract_prop("fiber_serve", job_ce, "output", MAY_BE_STRING, &L->j_output)
		|| !ferry_contract_prop("fiber_serve", job_ce, "flushed", MAY_BE_LONG, &L->j_flushed)) {
		return false;
	}
	zend_class_entry *epoch = ferry_find_class("fiber_serve", "Ferry\\Worker\\Internal\\Fiber\\FiberEpoch");
	L->request_ce = ferry_find_class("fiber_serve", "Ferry\\Worker\\Http\\Request");
	L->response_ce = ferry_find_class("fiber_serve", "Ferry\\Worker\\Http\\Response");
	L->relay_exception = ferry_find_class("fiber_serve", "Ferry\\Worker\\Relay\\RelayException");
	if (!epoch || !L->request_ce || !L->response_ce || !L->relay_exception
		|| !(L->issued = ferry_contract_static("fiber_serve", epoch, "issued"))
		|| !(L->preset_contexts = ferry_contract_static("fiber_serve", L->response_ce, "presetContexts"))
		|| !ferry_contract_prop("fiber_serve", L->request_ce, "uploads", MAY_BE_ARRAY, &L->r_uploads)
		|| !ferry_contract_prop("fiber_serve", L->response_ce, "parts", 0, &L->p_parts)
		|| !ferry_contract_prop("fiber_serve", L->response_ce, "file", MAY_BE_ARRAY | MAY_BE_NULL, &L->p_file)
		|| !ferry_contract_prop("fiber_serve", L->response_ce, "body", MAY_BE_STRING, &L->p_body)
		|| !ferry_contract_prop("fiber_serve", L->response_ce, "preset", MAY_BE_STRING | MAY_BE_NULL, &L->p_preset)
		|| !ferry_contract_prop("fiber_serve", L->response_ce, "status", MAY_BE_LONG, &L->p_status)) {
		if (!EG(exception)) {
			zend_throw_error(NULL, "Ferry\\Ext\\fiber_serve(): a static property php/worker should have is missing");
		}
		return false;
	}
	if (!ferry_find_response_fns("fiber_serve", L->response_ce, &L->context_fn, &L->html_fn, &L->json_fn)) {
		return false;
	}
	return true;
}
