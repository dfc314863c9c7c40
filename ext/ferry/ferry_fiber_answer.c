/*
 * The usual answer of ext/ferry's Fiber-mode hot path (ferry_fiber_job.c runs the job):
 * what HttpWorker::handle() in Fiber mode and WorkerSession::deliver() do for a handler that
 * returned a plain Response, a string or an array, written to the relay in C.
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
#include "php_ferry.h"
#include "ferry_frame.h"
#include "ferry_fiber.h"
#include "ferry_job_common.h"

#define FRAME_CODEC_RAW 0x04

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
		return ferry_write_all(L->out, L->relay_exception, &one, 1, total);
	}
	struct iovec iov[3] = {{small, head_len}, {ZSTR_VAL(context), ZSTR_LEN(context)}, {ZSTR_VAL(body), ZSTR_LEN(body)}};
	return ferry_write_all(L->out, L->relay_exception, iov, 3, total);
}

/*
 * The usual outcome, answered here: 1 answered, 0 the PHP path's (nothing done), -1 the
 * relay write failed (a RelayException is pending). *result may be replaced by the
 * Response made from a string or an array.
 */
int ferry_fiber_answer_plain(ferry_fibers *L, zend_object *fiber, zend_object *placeholder, ferry_fiber_slot *slot, zval *result)
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
		|| zend_hash_index_exists(Z_ARRVAL_P(OBJ_PROP(L->session, L->C.streams)), slot->id)) {
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
	ferry_answer_context(response, L->p_preset, L->p_status, L->preset_contexts, L->context_fn, &context);
	zend_string *body = Z_STR_P(OBJ_PROP(response, L->p_body));
	if (EG(exception) || Z_TYPE(context) != IS_STRING
		|| (uint64_t) Z_STRLEN(context) + ZSTR_LEN(body) > (uint64_t) L->max_payload) {
		zval_ptr_dtor(&context);
		return 0; /* an answer over the frame limit, or a context() that threw, is PHP's to say */
	}
	/* StreamedAnswer::end(), then the answer, as WorkerSession::deliver() writes it */
	bool ok = ferry_fiber_set_running(L, fiber, slot->id, false) && write_answer(L, slot->id, Z_STR(context), body);
	zval_ptr_dtor(&context);
	if (!ok) {
		return -1;
	}
	ferry_fiber_served++;
	return 1;
}
