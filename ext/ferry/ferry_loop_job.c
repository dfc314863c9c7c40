/*
 * One job of ext/ferry's worker loop (ferry_loop.c): HttpWorker::handle() and what
 * the sequential loop does around it, for the usual request, in C.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <sys/uio.h>

#include "php.h"
#include "main/php_output.h"
#include "zend_exceptions.h"
#include "php_ferry.h"
#include "ferry_frame.h"
#include "ferry_loop.h"
#include "ferry_job_common.h"
#include "ferry_direct.h"

static void assign_null(zval *slot)
{
	/* ferry_assign()'s order: null first, then the old value's destructor, which may read it */
	zval old;
	ZVAL_COPY_VALUE(&old, slot);
	ZVAL_NULL(slot);
	zval_ptr_dtor(&old);
}

/* $_COOKIE = $value, as HttpWorker does before and after each request. */
static void set_cookies(ferry_loop *L, zval *value)
{
	zval *slot = zend_hash_find(&EG(symbol_table), L->cookie_key);
	if (slot && Z_TYPE_P(slot) == IS_INDIRECT) {
		slot = Z_INDIRECT_P(slot);
	}
	if (slot) {
		ZVAL_DEREF(slot);
		if (Z_TYPE_P(slot) == IS_ARRAY && Z_TYPE_P(value) == IS_ARRAY && zend_hash_num_elements(Z_ARRVAL_P(slot)) == 0
			&& zend_hash_num_elements(Z_ARRVAL_P(value)) == 0) {
			return; /* [] over []: the usual request has no cookie */
		}
		ferry_assign(slot, value);
		return;
	}
	Z_TRY_ADDREF_P(value);
	zend_hash_add_new(&EG(symbol_table), L->cookie_key, value);
}

static bool is_empty_array(zval *v)
{
	return Z_TYPE_P(v) == IS_ARRAY && zend_hash_num_elements(Z_ARRVAL_P(v)) == 0;
}

/* What SyncCapture::begin() and release() would find nothing to do about. */
bool ferry_loop_capture_clean(ferry_loop *L)
{
	if (L->sapi) {
		return ferry_output_clean();
	}
	zval *level = OBJ_PROP(L->capture, L->c_level);
	zval *flushed = OBJ_PROP(L->capture, L->c_flushed);
	return Z_TYPE_P(level) == IS_LONG && Z_LVAL_P(level) > 0 && php_output_get_level() == Z_LVAL_P(level)
		&& OG(active) && OG(active)->buffer.used == 0 && Z_TYPE_P(flushed) == IS_STRING && Z_STRLEN_P(flushed) == 0;
}

/* Nothing the PHP loop would do between two jobs: nothing queued, not stopping. */
bool ferry_loop_worker_idle(ferry_loop *L)
{
	zend_object *s = L->session;
	return Z_TYPE_P(OBJ_PROP(s, L->C.stopping)) == IS_FALSE && Z_TYPE_P(OBJ_PROP(s, L->C.closed)) == IS_FALSE
		&& Z_TYPE_P(OBJ_PROP(s, L->C.outbox)) == IS_STRING && Z_STRLEN_P(OBJ_PROP(s, L->C.outbox)) == 0;
}

static bool write_answer(ferry_loop *L, uint32_t id, zend_string *context, zend_string *body, uint8_t stream_flags)
{
	if (L->conn) {
		if (!ferry_direct_answer(L->conn, ZSTR_VAL(context), ZSTR_LEN(context), ZSTR_VAL(body), ZSTR_LEN(body), false, false)) {
			ferry_direct_fail(L->conn, 502, "the worker sent an invalid response");
		}
		if (stream_flags & FRAME_FINISHING) {
			/* terminate hooks follow: the client has its answer first, as from the front */
			ferry_direct_answered(L->conn);
			ferry_direct_flush_blocking(L->conn, ferry_direct_write_ms);
		}
		return true;
	}
	uint32_t options[2] = {(uint32_t) ZSTR_LEN(context), id};
	uint8_t head[FERRY_FRAME_MAX_HEADER];
	size_t total = ZSTR_LEN(context) + ZSTR_LEN(body);
	size_t head_len = ferry_frame_write_header(head, FRAME_CODEC_RAW, options, 2, (uint32_t) total, stream_flags);
	struct iovec iov[3] = {
		{head, head_len}, {ZSTR_VAL(context), ZSTR_LEN(context)}, {ZSTR_VAL(body), ZSTR_LEN(body)}
	};
	int count = 3;
	total += head_len;
	/* A small answer goes as one buffer: the kernel's copy of one segment is cheaper. */
	char small[4096];
	if (total <= sizeof(small)) {
		memcpy(small, head, head_len);
		memcpy(small + head_len, ZSTR_VAL(context), ZSTR_LEN(context));
		memcpy(small + head_len + ZSTR_LEN(context), ZSTR_VAL(body), ZSTR_LEN(body));
		iov[0].iov_base = small;
		iov[0].iov_len = total;
		count = 1;
	}
	return ferry_write_all(L->out, L->relay_exception, iov, count, total);
}

/*
 * The job's outcome is not the plain case: http_serve() returns it to NativeLoop, which
 * finishes it with HttpWorker::resume(). The session's $handed is [$id, $context, $body,
 * $result, $php, $error]: the handler's $result and request_end()'s $php (null when
 * undefined) and the pending exception, if any. Takes result and php.
 */
static ferry_job_outcome hand_over(ferry_loop *L, uint32_t id, const char *context, size_t context_len,
	zend_string *body, zval *result, zval *php)
{
	zend_object *error = NULL;
	if (EG(exception) && !(error = ferry_take_exception())) {
		zval_ptr_dtor(php);
		zval_ptr_dtor(result);
		return JOB_THROWN;
	}
	zval handed;
	array_init_size(&handed, 6);
	HashTable *h = Z_ARRVAL(handed);
	zval v;
	ZVAL_LONG(&v, id);
	zend_hash_next_index_insert_new(h, &v);
	ZVAL_STRINGL_FAST(&v, context, context_len);
	zend_hash_next_index_insert_new(h, &v);
	ZVAL_STR_COPY(&v, body);
	zend_hash_next_index_insert_new(h, &v);
	if (Z_TYPE_P(result) == IS_UNDEF) {
		ZVAL_NULL(&v);
	} else {
		ZVAL_COPY_VALUE(&v, result);
	}
	zend_hash_next_index_insert_new(h, &v);
	if (Z_TYPE_P(php) == IS_ARRAY) {
		ZVAL_COPY_VALUE(&v, php);
	} else {
		zval_ptr_dtor(php);
		ZVAL_NULL(&v);
	}
	zend_hash_next_index_insert_new(h, &v);
	if (error) {
		ZVAL_OBJ(&v, error);
	} else {
		ZVAL_NULL(&v);
	}
	zend_hash_next_index_insert_new(h, &v);
	ferry_assign(OBJ_PROP(L->session, L->C.handed), &handed);
	zval_ptr_dtor(&handed);
	return JOB_RESUME;
}

/*
 * The terminate hooks of a job answered here: WorkerSession::afterNativeAnswer() makes the
 * Job they are given and runs afterAnswer(), which also says when they are done. Called from
 * here rather than returned to NativeLoop: every framework integration registers a terminate
 * hook, and their usual request would pay for a return and a new http_serve() call each.
 */
static ferry_job_outcome after_answer(ferry_loop *L, uint32_t id, const char *context, size_t context_len,
	zend_string *body)
{
	zval args[3], retval;
	ZVAL_LONG(&args[0], id);
	ZVAL_STRINGL_FAST(&args[1], context, context_len);
	ZVAL_STR(&args[2], body);
	zend_call_known_instance_method(L->C.after_fn, L->session, &retval, 3, args);
	zval_ptr_dtor(&args[1]);
	zval_ptr_dtor(&retval);
	return EG(exception) ? JOB_THROWN : JOB_DONE;
}

ferry_job_outcome ferry_loop_serve_job(ferry_loop *L, uint32_t id, const char *context, size_t clen, zend_string *body)
{
	zval request;
	int built = ferry_request_build(context, clen, body, &request);
	if (built <= 0) {
		if (built < 0) {
			zend_clear_exception(); /* handle() throws it again, into a 500 answer */
		}
		return JOB_DECLINED;
	}
	zend_object *req = Z_OBJ(request);
	if (req->ce != L->request_ce || !is_empty_array(OBJ_PROP(req, L->r_uploads))) {
		zval_ptr_dtor(&request);
		return JOB_DECLINED;
	}
	if (L->cookies) {
		ferry_assign(OBJ_PROP(req, L->r_cookies), L->cookies);
	}

	/* SyncCapture::begin(): output from here on is the job's. */
	zval placeholder;
	ZVAL_OBJ(&placeholder, L->placeholder);
	ferry_assign(OBJ_PROP(L->capture, L->c_job), &placeholder);
	if (L->sapi) {
		ferry_output_begin();
	} else {
		zval zero;
		ZVAL_LONG(&zero, 0);
		ferry_assign(OBJ_PROP(L->capture, L->c_refusals), &zero);
	}
	/* StreamedAnswer::begin(), for Response::earlyHints(): the session's $running (an int or null, nothing to release) */
	ZVAL_LONG(OBJ_PROP(L->session, L->C.running), id);
	ferry_restore_globals(OBJ_PROP(L->session, L->C.kept));
	/* session_start() takes the session id from $_COOKIE, as PHP fills it. */
	set_cookies(L, OBJ_PROP(req, L->r_cookies));
	ferry_request_start();

	zval result, php;
	ZVAL_UNDEF(&php);
	L->handler.params = &request;
	L->handler.param_count = 1;
	L->handler.retval = &result;
	zend_call_function(&L->handler, &L->handler_cache);
	zval_ptr_dtor(&request);
	if (EG(exception)) {
		return hand_over(L, id, context, clen, body, &result, &php);
	}
	bool plain = ferry_request_finish(&php);
	if (EG(exception)) {
		return hand_over(L, id, context, clen, body, &result, &php);
	}
	if (plain && (Z_TYPE(result) == IS_STRING || Z_TYPE(result) == IS_ARRAY)) {
		/* HttpWorker::toResponse() with nothing collected: Response::html($result) or json($result) */
		zval converted;
		zend_function *fn = Z_TYPE(result) == IS_STRING ? L->html_fn : L->json_fn;
		zend_call_known_function(fn, NULL, L->response_ce, &converted, 1, &result, NULL);
		if (EG(exception)) {
			return hand_over(L, id, context, clen, body, &result, &php);
		}
		zval_ptr_dtor(&result);
		ZVAL_COPY_VALUE(&result, &converted);
	}
	zend_object *response = Z_TYPE(result) == IS_OBJECT ? Z_OBJ(result) : NULL;
	zval answer_context;
	ZVAL_UNDEF(&answer_context);
	if (plain && response && response->ce == L->response_ce && Z_TYPE_P(OBJ_PROP(response, L->p_parts)) == IS_NULL
		&& Z_TYPE_P(OBJ_PROP(response, L->p_file)) == IS_NULL && Z_TYPE_P(OBJ_PROP(response, L->p_body)) == IS_STRING
		&& ferry_loop_capture_clean(L) && ferry_loop_worker_idle(L) && !zend_hash_index_exists(Z_ARRVAL_P(OBJ_PROP(L->session, L->C.streams)), id)) {
		ferry_answer_context(response, L->p_preset, L->p_status, L->preset_contexts, L->context_fn, &answer_context);
	}
	zend_string *out_body = Z_TYPE(answer_context) == IS_STRING ? Z_STR_P(OBJ_PROP(response, L->p_body)) : NULL;
	if (!out_body || (uint64_t) Z_STRLEN(answer_context) + ZSTR_LEN(out_body) > (uint64_t) L->max_payload) {
		/* Everything else, an answer over the frame limit or a context() that threw included, is PHP's to say. */
		zval_ptr_dtor(&answer_context);
		return hand_over(L, id, context, clen, body, &result, &php);
	}
	zval_ptr_dtor(&php);
	/* StreamedAnswer::end(), HttpWorker::reset() ($_COOKIE = [], the reset hooks), SyncCapture::end() */
	ZVAL_NULL(OBJ_PROP(L->session, L->C.running));
	zval empty;
	ZVAL_EMPTY_ARRAY(&empty);
	set_cookies(L, &empty);
	if (!is_empty_array(OBJ_PROP(L->session, L->C.reset))) {
		/* A hook that throws is logged and stops the worker there; only exit() comes back here. */
		zval ignored;
		zend_call_known_instance_method_with_0_params(L->C.reset_fn, L->session, &ignored);
		zval_ptr_dtor(&ignored);
		if (EG(exception)) {
			zval_ptr_dtor(&answer_context);
			zval_ptr_dtor(&result);
			return JOB_THROWN;
		}
	}
	assign_null(OBJ_PROP(L->capture, L->c_job));
	if (L->sapi) {
		ferry_output_drop();
	}
	/* Read before the write: the server is told now whether the worker stays busy after it. */
	bool hooked = !is_empty_array(OBJ_PROP(L->session, L->C.terminate));
	bool written = write_answer(L, id, Z_STR(answer_context), out_body, hooked ? FRAME_FINISHING : 0);
	zval_ptr_dtor(&answer_context);
	zval_ptr_dtor(&result);
	if (!written) {
		return JOB_THROWN;
	}
	return hooked ? after_answer(L, id, context, clen, body) : JOB_DONE;
}
