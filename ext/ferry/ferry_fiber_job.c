/*
 * Ferry\Ext\fiber_body(): what each Fiber of ext/ferry's Fiber-mode hot path runs
 * (ferry_fiber.c starts it): job after job, what FiberPool::serve(), WorkerSession::execute(),
 * HttpWorker::handle() and WorkerSession::finish() do, in C for the usual outcome.
 *
 * Output: the Fiber keeps one placeholder Job for its life, filed under it in
 * FiberCapture, so what a handler echoes lands there; a job that echoed, set a status or a
 * header through PHP, returned anything but a plain Response, threw, or waited is finished
 * by NativeFibers::finish() in PHP, which takes the output over into the job's real Job.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "zend_fibers.h"
#include "zend_interfaces.h"
#include "php_ferry.h"
#include "ferry_fiber.h"
#include "ferry_job_common.h"
#include "ferry_fiberio.h"

bool ferry_fiber_set_running(ferry_fibers *L, zend_object *fiber, uint32_t id, bool running)
{
	zval *map = OBJ_PROP(L->session, L->C.fiber_running);
	if (Z_TYPE_P(map) != IS_OBJECT) {
		return false;
	}
	zval key, value;
	ZVAL_OBJ(&key, fiber);
	if (running) {
		ZVAL_LONG(&value, id);
	} else {
		ZVAL_NULL(&value);
	}
	Z_OBJ_HT_P(map)->write_dimension(Z_OBJ_P(map), &key, &value);
	return !EG(exception);
}

/* NativeFibers::promote() for a job the body finishes in PHP; false when it threw. */
static bool promote(zend_object *state, zend_object *fiber, zend_object *placeholder, ferry_fiber_slot *slot)
{
	zval args[5], job;
	ZVAL_OBJ(&args[0], fiber);
	ZVAL_OBJ(&args[1], placeholder);
	ZVAL_LONG(&args[2], slot->id);
	ZVAL_STRINGL_FAST(&args[3], slot->context, slot->clen);
	ZVAL_STR(&args[4], slot->body);
	ferry_fiber_call(state, "promote", &job, 5, args);
	zval_ptr_dtor(&args[3]);
	if (EG(exception) || Z_TYPE(job) != IS_OBJECT) {
		zval_ptr_dtor(&job);
		return false;
	}
	slot->job = Z_OBJ(job);
	return true;
}

/* NativeFibers::finish(): the job's rest in PHP. 1 the Fiber may serve on, 0 it ends, 2 the relay broke, -1 an exception unwinds. */
static int finish_in_php(zend_object *state, zend_object *fiber, zend_object *placeholder, ferry_fiber_slot *slot,
	zval *result, zend_object *error)
{
	if (!slot->job && !promote(state, fiber, placeholder, slot)) {
		return -1;
	}
	zval args[5], ret;
	ZVAL_OBJ(&args[0], slot->job);
	ZVAL_OBJ(&args[1], fiber);
	ZVAL_OBJ(&args[2], placeholder);
	if (Z_TYPE_P(result) == IS_UNDEF) {
		ZVAL_NULL(&args[3]);
	} else {
		ZVAL_COPY_VALUE(&args[3], result);
	}
	if (error) {
		ZVAL_OBJ(&args[4], error);
	} else {
		ZVAL_NULL(&args[4]);
	}
	ferry_fiber_call(state, "finish", &ret, 5, args);
	/* true: serve on; false: the job failed; null: the relay broke */
	int reusable = EG(exception) ? -1 : Z_TYPE(ret) == IS_TRUE ? 1 : Z_TYPE(ret) == IS_NULL ? 2 : 0;
	zval_ptr_dtor(&ret);
	return reusable;
}

/* One job, from the handler call to its answer. 1 reusable, 0 not, 2 the relay broke, -1 an exception unwinds. */
static int run_job(zend_object *state, zend_object *placeholder, zend_object *fiber, ferry_fiber_slot *slot,
	zval *request, bool *registered)
{
	ferry_fibers *L = ferry_fiber_serving;
	/* PHP keeps error_reporting per Fiber: a parked one still has its last job's. */
	zend_long reporting = zend_ini_long("error_reporting", sizeof("error_reporting") - 1, 0);
	if (EG(error_reporting) != reporting) {
		EG(error_reporting) = (int) reporting;
	}
	zval *issued = L->issued;
	ZVAL_DEREF(issued);
	zend_long issued_before = Z_TYPE_P(issued) == IS_LONG ? Z_LVAL_P(issued) : 0;
	/* FiberCapture::begin(), StreamedAnswer::begin(), Superglobals::restore() */
	zval zero;
	ZVAL_LONG(&zero, 0);
	ferry_assign(OBJ_PROP(L->capture, L->c_refusals), &zero);
	zval result;
	ZVAL_UNDEF(&result);
	int reusable;
	if (!ferry_fiber_set_running(L, fiber, slot->id, true)) {
		zval_ptr_dtor(request);
		return -1;
	}
	ferry_restore_globals(OBJ_PROP(L->session, L->C.kept));
	if (ferry_fio_enabled()) {
		ferry_fio_turn(EG(active_fiber)); /* a job begins: what it uses is its own (ferry_fiberio_owner.c) */
	}
	L->handler.params = request;
	L->handler.param_count = 1;
	L->handler.retval = &result;
	zend_call_function(&L->handler, &L->handler_cache);
	zval_ptr_dtor(request);
	/* Once the job has waited, the fiber_serve() call that started it may be over. */
	bool promoted = slot->detached;
	L = promoted ? NULL : ferry_fiber_serving;
	zend_object *error = NULL;
	if (EG(exception) && !(error = ferry_take_exception())) {
		zval_ptr_dtor(&result);
		return -1;
	}
	int answered = 0;
	if (!promoted && !error) {
		answered = ferry_fiber_answer_plain(L, fiber, placeholder, slot, &result);
		if (answered == 0 && EG(exception) && !(error = ferry_take_exception())) {
			zval_ptr_dtor(&result);
			return -1;
		}
	}
	if (answered < 0) {
		reusable = -1;
	} else if (answered) {
		reusable = 1;
	} else {
		reusable = finish_in_php(state, fiber, placeholder, slot, &result, error);
	}
	if (error) {
		OBJ_RELEASE(error);
	}
	zval_ptr_dtor(&result);
	if (reusable >= 0 && Z_TYPE_P(issued) == IS_LONG && Z_LVAL_P(issued) != issued_before) {
		/* It registered a loop callback: FiberEpoch::advance(), and the runner's loop must tick. */
		if (!slot->detached) {
			*registered = true;
		}
		zend_class_entry *epoch = zend_lookup_class(zend_string_init_interned("Ferry\\Worker\\Internal\\Fiber\\FiberEpoch",
			sizeof("Ferry\\Worker\\Internal\\Fiber\\FiberEpoch") - 1, 0));
		zval arg, ret;
		ZVAL_OBJ(&arg, fiber);
		if (epoch) {
			zend_call_method(NULL, epoch, NULL, "advance", sizeof("advance") - 1, &ret, 1, &arg, NULL);
			zval_ptr_dtor(&ret);
		}
		if (EG(exception)) {
			reusable = -1;
		}
	}
	return reusable;
}

ZEND_FUNCTION(ferry_fiber_body)
{
	zval *state, *placeholder;

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_OBJECT(state)
		Z_PARAM_OBJECT(placeholder)
	ZEND_PARSE_PARAMETERS_END();

	zend_fiber *current = EG(active_fiber);
	if (!current || !ferry_fiber_next || ferry_fiber_next->fiber != &current->std || !ferry_fiber_serving) {
		zend_throw_error(NULL, "Ferry\\Ext\\fiber_body() runs only in a Fiber that Ferry\\Ext\\fiber_serve() starts");
		RETURN_THROWS();
	}
	zend_object *fiber = &current->std;
	zend_function *suspend = zend_hash_str_find_ptr(&zend_ce_fiber->function_table, "suspend", sizeof("suspend") - 1);
	for (;;) {
		ferry_fiber_handoff *h = ferry_fiber_next;
		ferry_fiber_next = NULL;
		ferry_fiber_slot slot = {h->id, h->context, h->clen, zend_string_copy(h->body), NULL, false};
		zval request;
		ZVAL_COPY_VALUE(&request, &h->request);
		int *outcome = h->outcome;
		*h->slot = &slot;
		int reusable = run_job(Z_OBJ_P(state), Z_OBJ_P(placeholder), fiber, &slot, &request, h->registered);
		if (ferry_fio_enabled()) {
			ferry_fio_turn(current); /* the job is over, its connections free */
		}
		bool detached = slot.detached;
		if (slot.job) {
			OBJ_RELEASE(slot.job);
		}
		zend_string_release(slot.body);
		if (reusable < 0) {
			RETURN_THROWS();
		}
		if (!detached) {
			/* fiber_serve() keeps it, or not */
			*outcome = reusable == 1 ? FIBER_PARKED : reusable == 2 ? FIBER_BROKEN : FIBER_ENDED;
		}
		if (reusable != 1) {
			return;
		}
		if (detached) {
			/* Finished after a wait, resumed by the runner's loop: parked among NativeFibers'. */
			zval args[2], parked;
			ZVAL_OBJ(&args[0], fiber);
			ZVAL_COPY_VALUE(&args[1], placeholder);
			ferry_fiber_call(Z_OBJ_P(state), "park", &parked, 2, args);
			bool kept = !EG(exception) && zend_is_true(&parked);
			zval_ptr_dtor(&parked);
			if (EG(exception)) {
				RETURN_THROWS();
			}
			if (!kept) {
				return;
			}
		}
		/* Parked: only fiber_serve() resumes it with a job; NativeFibers::trim() with null ends it. */
		for (;;) {
			zval value;
			zend_call_known_function(suspend, NULL, zend_ce_fiber, &value, 0, NULL, NULL);
			if (EG(exception)) {
				RETURN_THROWS();
			}
			if (ferry_fiber_next && ferry_fiber_next->fiber == fiber) {
				zval_ptr_dtor(&value);
				break;
			}
			bool end = Z_TYPE(value) == IS_NULL;
			zval_ptr_dtor(&value);
			if (end) {
				return;
			}
			php_error_docref(NULL, E_WARNING, "a parked worker Fiber was resumed by something other than "
				"Ferry's Fiber runner; ignored, it keeps waiting");
		}
	}
}
