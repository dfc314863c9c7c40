/*
 * Ferry\Ext\fiber_body(): what each Fiber of ext/ferry's Fiber-mode hot path runs
 * (ferry_fiber.c starts it): job after job, what FiberPool::serve(), Worker::execute(),
 * HttpWorker::handle() and Worker::finish() do, in C for the usual outcome.
 *
 * Output: the Fiber keeps one placeholder Job for its life, filed under it in
 * FiberCapture, so what a handler echoes lands there; a job that echoed, set a status or a
 * header through PHP, returned anything but a plain Response, threw, or waited is finished
 * by NativeFibers::finish() in PHP, which takes the output over into the job's real Job.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <sys/uio.h>

#include "php.h"
#include "SAPI.h"
#include "main/php_output.h"
#include "zend_exceptions.h"
#include "zend_fibers.h"
#include "zend_interfaces.h"
#include "php_ferry.h"
#include "ferry_frame.h"
#include "ferry_fiber.h"

#define FRAME_CODEC_RAW 0x04

static void assign(zval *slot, zval *value)
{
	zval old;
	ZVAL_COPY_VALUE(&old, slot);
	ZVAL_COPY(slot, value);
	zval_ptr_dtor(&old);
}

/* Superglobals::restore(): each back to the array HttpWorker kept; an untouched one is that very array. */
static void restore_globals(ferry_fibers *L)
{
	zval *kept = OBJ_PROP(L->http, L->h_kept);
	if (Z_TYPE_P(kept) != IS_ARRAY) {
		return;
	}
	zend_string *name;
	zval *value;
	ZEND_HASH_FOREACH_STR_KEY_VAL(Z_ARRVAL_P(kept), name, value) {
		if (!name) {
			continue;
		}
		zval *slot = zend_hash_find(&EG(symbol_table), name);
		if (slot && Z_TYPE_P(slot) == IS_INDIRECT) {
			slot = Z_INDIRECT_P(slot);
		}
		if (!slot || Z_TYPE_P(slot) == IS_UNDEF) {
			Z_TRY_ADDREF_P(value);
			if (slot) {
				ZVAL_COPY_VALUE(slot, value);
			} else {
				zend_hash_add_new(&EG(symbol_table), name, value);
			}
			continue;
		}
		ZVAL_DEREF(slot);
		if (Z_TYPE_P(slot) == IS_ARRAY && Z_TYPE_P(value) == IS_ARRAY && Z_ARR_P(slot) == Z_ARR_P(value)) {
			continue;
		}
		assign(slot, value);
	} ZEND_HASH_FOREACH_END();
}

/* StreamedAnswer::begin() / end() for this Fiber: [worker, id], or null between jobs. */
static bool set_running(ferry_fibers *L, zend_object *fiber, uint32_t id, bool running)
{
	zval *map = L->fiber_running;
	ZVAL_DEREF(map);
	if (Z_TYPE_P(map) != IS_OBJECT) {
		return false;
	}
	zval key, value;
	ZVAL_OBJ(&key, fiber);
	if (running) {
		array_init_size(&value, 2);
		GC_ADDREF(L->worker);
		add_next_index_object(&value, L->worker);
		add_next_index_long(&value, id);
	} else {
		ZVAL_NULL(&value);
	}
	Z_OBJ_HT_P(map)->write_dimension(Z_OBJ_P(map), &key, &value);
	zval_ptr_dtor(&value);
	return !EG(exception);
}

static bool write_all(ferry_fibers *L, struct iovec *v, int count, size_t total)
{
	size_t written = 0;
	while (written < total) {
		ssize_t n = writev(L->out, v, count);
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				struct pollfd p = {L->out, POLLOUT, 0};
				(void) poll(&p, 1, -1);
				continue;
			}
			zend_throw_exception_ex(L->relay_exception, 0, "relay write failed after %zu of %zu bytes: %s",
				written, total, strerror(errno));
			return false;
		}
		written += (size_t) n;
		while (count > 0 && (size_t) n >= v->iov_len) {
			n -= (ssize_t) v->iov_len;
			v++;
			count--;
		}
		if (count > 0) {
			v->iov_base = (char *) v->iov_base + n;
			v->iov_len -= (size_t) n;
		}
	}
	return true;
}

static bool write_answer(ferry_fibers *L, uint32_t id, zend_string *context, zend_string *body)
{
	uint32_t options[2] = {(uint32_t) ZSTR_LEN(context), id};
	char small[4096];
	size_t head_len = ferry_frame_write_header((uint8_t *) small, FRAME_CODEC_RAW, options, 2,
		(uint32_t) (ZSTR_LEN(context) + ZSTR_LEN(body)), 0);
	size_t total = head_len + ZSTR_LEN(context) + ZSTR_LEN(body);
	if (total <= sizeof(small)) {
		/* One segment: the kernel's copy of it is cheaper. */
		memcpy(small + head_len, ZSTR_VAL(context), ZSTR_LEN(context));
		memcpy(small + head_len + ZSTR_LEN(context), ZSTR_VAL(body), ZSTR_LEN(body));
		struct iovec one = {small, total};
		return write_all(L, &one, 1, total);
	}
	struct iovec iov[3] = {{small, head_len}, {ZSTR_VAL(context), ZSTR_LEN(context)}, {ZSTR_VAL(body), ZSTR_LEN(body)}};
	return write_all(L, iov, 3, total);
}

/* $response->context(), from the cache that method fills once it has made the answer. */
static void answer_context_of(ferry_fibers *L, zend_object *response, zval *out)
{
	zval *preset = OBJ_PROP(response, L->p_preset);
	zval *status = OBJ_PROP(response, L->p_status);
	zval *cache = L->preset_contexts;
	ZVAL_DEREF(cache);
	if (Z_TYPE_P(preset) == IS_STRING && Z_TYPE_P(status) == IS_LONG && Z_TYPE_P(cache) == IS_ARRAY) {
		zval *by_type = zend_hash_index_find(Z_ARRVAL_P(cache), (zend_ulong) Z_LVAL_P(status));
		zval *context = by_type && Z_TYPE_P(by_type) == IS_ARRAY ? zend_symtable_find(Z_ARRVAL_P(by_type), Z_STR_P(preset)) : NULL;
		if (context && Z_TYPE_P(context) == IS_STRING) {
			ZVAL_COPY(out, context);
			return;
		}
	}
	zend_call_known_instance_method_with_0_params(L->context_fn, response, out);
}

/*
 * The usual outcome, answered here: 1 answered, 0 the PHP path's (nothing done), -1 the
 * relay write failed (a RelayException is pending). *result may be replaced by the
 * Response made from a string or an array.
 */
static int answer_plain(ferry_fibers *L, zend_object *fiber, zend_object *placeholder, ferry_fiber_slot *slot, zval *result)
{
	/* HttpWorker::handle() in Fiber mode: PHP's status untouched and no header set */
	if ((SG(sapi_headers).http_response_code != 0 && SG(sapi_headers).http_response_code != 200)
		|| zend_llist_count(&SG(sapi_headers).headers) != 0) {
		return 0;
	}
	zval *output = OBJ_PROP(placeholder, L->j_output), *flushed = OBJ_PROP(placeholder, L->j_flushed);
	zval *level = OBJ_PROP(L->capture, L->c_level);
	if (Z_TYPE_P(output) != IS_STRING || Z_STRLEN_P(output) != 0 || Z_TYPE_P(flushed) != IS_LONG || Z_LVAL_P(flushed) != 0
		|| Z_TYPE_P(level) != IS_LONG || php_output_get_level() != Z_LVAL_P(level) || !ferry_fiber_worker_idle(L)
		|| zend_hash_index_exists(Z_ARRVAL_P(OBJ_PROP(L->worker, L->w_streams)), slot->id)) {
		return 0;
	}
	if (Z_TYPE_P(result) == IS_STRING || Z_TYPE_P(result) == IS_ARRAY) {
		/* HttpWorker::toResponse(): Response::html($result) or json($result) */
		zval converted;
		zend_call_known_function(Z_TYPE_P(result) == IS_STRING ? L->html_fn : L->json_fn, NULL, L->response_ce,
			&converted, 1, result, NULL);
		if (EG(exception)) {
			return 0; /* finished in PHP, with the exception */
		}
		zval_ptr_dtor(result);
		ZVAL_COPY_VALUE(result, &converted);
	}
	zend_object *response = Z_TYPE_P(result) == IS_OBJECT ? Z_OBJ_P(result) : NULL;
	if (!response || response->ce != L->response_ce || Z_TYPE_P(OBJ_PROP(response, L->p_parts)) != IS_NULL
		|| Z_TYPE_P(OBJ_PROP(response, L->p_file)) != IS_NULL || Z_TYPE_P(OBJ_PROP(response, L->p_body)) != IS_STRING) {
		return 0;
	}
	zval context;
	answer_context_of(L, response, &context);
	zend_string *body = Z_STR_P(OBJ_PROP(response, L->p_body));
	if (EG(exception) || Z_TYPE(context) != IS_STRING
		|| (uint64_t) Z_STRLEN(context) + ZSTR_LEN(body) > (uint64_t) L->max_payload) {
		zval_ptr_dtor(&context);
		return 0; /* an answer over the frame limit, or a context() that threw, is PHP's to say */
	}
	/* StreamedAnswer::end(), then the answer, as Worker::deliver() writes it */
	bool ok = set_running(L, fiber, slot->id, false) && write_answer(L, slot->id, Z_STR(context), body);
	zval_ptr_dtor(&context);
	if (!ok) {
		return -1;
	}
	ferry_fiber_served++;
	return 1;
}

/* Takes the pending exception, unless it is exit(), which must unwind on. */
static zend_object *take_exception(void)
{
	zend_object *ex = EG(exception);
	if (zend_is_unwind_exit(ex) || zend_is_graceful_exit(ex)) {
		return NULL;
	}
	GC_ADDREF(ex);
	zend_clear_exception();
	return ex;
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

/* NativeFibers::finish(): the job's rest in PHP. 1 the Fiber may serve on, 0 it ends, -1 an exception unwinds. */
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
	int reusable = EG(exception) ? -1 : zend_is_true(&ret);
	zval_ptr_dtor(&ret);
	return reusable;
}

/* One job, from the handler call to its answer. 1 reusable, 0 not, -1 an exception unwinds. */
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
	assign(OBJ_PROP(L->capture, L->c_refusals), &zero);
	zval result;
	ZVAL_UNDEF(&result);
	int reusable;
	if (!set_running(L, fiber, slot->id, true)) {
		zval_ptr_dtor(request);
		return -1;
	}
	restore_globals(L);
	L->handler.params = request;
	L->handler.param_count = 1;
	L->handler.retval = &result;
	zend_call_function(&L->handler, &L->handler_cache);
	zval_ptr_dtor(request);
	/* Once the job has waited, the fiber_serve() call that started it may be over. */
	bool promoted = slot->detached;
	L = promoted ? NULL : ferry_fiber_serving;
	zend_object *error = NULL;
	if (EG(exception) && !(error = take_exception())) {
		zval_ptr_dtor(&result);
		return -1;
	}
	int answered = 0;
	if (!promoted && !error) {
		answered = answer_plain(L, fiber, placeholder, slot, &result);
		if (answered == 0 && EG(exception) && !(error = take_exception())) {
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
		zend_class_entry *epoch = zend_lookup_class(zend_string_init_interned("Ferry\\Worker\\Internal\\FiberEpoch",
			sizeof("Ferry\\Worker\\Internal\\FiberEpoch") - 1, 0));
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
		bool detached = slot.detached;
		if (slot.job) {
			OBJ_RELEASE(slot.job);
		}
		zend_string_release(slot.body);
		if (reusable < 0) {
			RETURN_THROWS();
		}
		if (!detached) {
			*outcome = reusable ? FIBER_PARKED : FIBER_ENDED; /* fiber_serve() keeps it, or not */
		}
		if (!reusable) {
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
