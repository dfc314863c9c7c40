/*
 * ext/ferry's worker loop (ferry_loop.c reads and dispatches, ferry_loop_job.c serves one
 * job): what it found out about php/worker's classes, bound once per session class and kept.
 */
#ifndef FERRY_LOOP_H
#define FERRY_LOOP_H

#include "php.h"
#include "ferry_contract.h"

#define FRAME_CONTROL 0x01
#define FRAME_CODEC_RAW 0x04
/* Stream flag of an answer whose terminate hooks run next (docs/protocol.md): the worker is not free yet. */
#define FRAME_FINISHING 0x10

typedef struct {
	int in, out;
	zend_long max_payload;
	/* the WorkerSession, the one class of php/worker's state bound here, and where its contract's properties are */
	zend_object *session;
	ferry_contract C;
	zend_object *capture, *placeholder;
	zend_fcall_info handler;
	zend_fcall_info_cache handler_cache;
	/* SyncCapture, or SapiCapture (sapi: only $job, the output being ferry_output.c's) */
	uint32_t c_job, c_refusals, c_flushed, c_level;
	bool sapi;
	/* Request */
	zend_class_entry *request_ce;
	uint32_t r_cookies, r_uploads;
	/* Response */
	zend_class_entry *response_ce;
	uint32_t p_parts, p_file, p_body, p_preset, p_status;
	zend_function *context_fn;
	/* Response::html() and Response::json(): HttpWorker::toResponse() for a string or an array */
	zend_function *html_fn, *json_fn;
	/* Response::$presetContexts: status => preset Content-Type => answer context */
	zval *preset_contexts;
	zend_class_entry *relay_exception;
	zend_string *cookie_key;
	/* direct mode (ferry_direct.c): answers go to this connection, not to the relay */
	struct direct_conn *conn;
	/* $cookies to give the Request instead of the context's (direct mode: PHP's own parse), or UNDEF */
	zval *cookies;
} ferry_loop;

typedef enum {
	JOB_DONE,
	JOB_RESUME,   /* handled, its outcome in the session's $handed: HttpWorker::resume() finishes it */
	JOB_DECLINED, /* untouched: the frame goes back to PHP */
	JOB_THROWN    /* an exception (exit() among them) leaves the loop */
} ferry_job_outcome;

/* The contract's binding for L->session: the one kept for its class, or a new one. */
bool ferry_loop_bind(ferry_loop *L);
/* A loop's start (http_serve(), direct_serve()): the session bound, the handler, placeholder and frame limit taken. */
bool ferry_loop_open(ferry_loop *L, const char *fn, zval *session, zval *handler, zval *placeholder);
/* Nothing SyncCapture::begin() or release() would act on: no output since the last job. */
bool ferry_loop_capture_clean(ferry_loop *L);
/* Nothing the PHP loop would do between two jobs: nothing queued, not stopping. */
bool ferry_loop_worker_idle(ferry_loop *L);
/* One job frame's request: built, handled and answered, or its outcome left in $handed for HttpWorker::resume(). */
ferry_job_outcome ferry_loop_serve_job(ferry_loop *L, uint32_t id, const char *context, size_t clen, zend_string *body);

#endif
