/*
 * ext/ferry's Fiber-mode hot path (ferry_fiber.c reads and starts jobs, ferry_fiber_job.c
 * runs one in its Fiber): php/worker's FiberRunner, FiberPool and HttpWorker::handle() in
 * C for the job that never waits and whose outcome is the usual one.
 */
#ifndef FERRY_FIBER_H
#define FERRY_FIBER_H

#include "php.h"
#include "ferry_contract.h"

/* What one Ferry\Ext\fiber_serve() call found out about php/worker's classes. */
typedef struct {
	int in, out;
	zend_long max_payload;
	/* NativeFibers, and the WorkerSession: the one class of php/worker's state bound here */
	zend_object *state, *session, *capture;
	ferry_contract C;
	zend_fcall_info handler;
	zend_fcall_info_cache handler_cache;
	/* FiberCapture ($level) and Job ($output, $flushed) */
	uint32_t c_level, c_refusals, j_output, j_flushed;
	zend_class_entry *request_ce, *response_ce;
	uint32_t r_uploads;
	uint32_t p_parts, p_file, p_body, p_preset, p_status;
	zend_function *context_fn, *html_fn, *json_fn;
	zval *preset_contexts;
	/* FiberEpoch::$issued */
	zval *issued;
	zend_class_entry *relay_exception;
} ferry_fibers;

/* One job as its Fiber holds it, on the Fiber's own stack. */
typedef struct {
	uint32_t id;
	const char *context; /* in fiber_serve()'s buffer: valid until the job is detached */
	size_t clen;
	zend_string *body;
	/* its Job, from NativeFibers::promote(): made when the job waits or is finished in PHP */
	zend_object *job;
	/* fiber_serve() gave it up when it waited: the Fiber must not report to it any more */
	bool detached;
} ferry_fiber_slot;

/* What the body of a Fiber reports to fiber_serve() about a job that never waited. */
#define FIBER_RUNNING 0 /* it waits: the job must be promoted */
#define FIBER_PARKED 1  /* done; the Fiber waits for the next job */
#define FIBER_ENDED 2   /* done; the Fiber ended (the job failed) */
#define FIBER_BROKEN 3  /* the relay broke: the runner throws what NativeFibers kept of it */

/* What fiber_serve() hands the Fiber it starts or resumes. */
typedef struct {
	zend_object *fiber;
	zval request;
	uint32_t id;
	const char *context;
	size_t clen;
	zend_string *body;
	int *outcome;                /* FIBER_* */
	ferry_fiber_slot **slot;     /* where the body says which slot is the job's */
	bool *registered;            /* the job registered a loop callback */
} ferry_fiber_handoff;

extern ferry_fiber_handoff *ferry_fiber_next;
extern ferry_fibers *ferry_fiber_serving;
extern zend_long ferry_fiber_served;

/* ferry_fiber_init.c: L's classes, properties and functions; false with an Error thrown */
bool ferry_fiber_init(ferry_fibers *L);
/* Calls $object->$method(...$args) into *retval. */
void ferry_fiber_call(zend_object *object, const char *method, zval *retval, uint32_t argc, zval *args);
/* Nothing the PHP runner would do between two jobs: no hooks, nothing queued, not stopping. */
bool ferry_fiber_worker_idle(ferry_fibers *L);
void ferry_fiber_rshutdown(void);
/* ferry_fiber_job.c: StreamedAnswer::begin() / end() for this Fiber: the session's $fiberRunning[$fiber] = id, or null between jobs */
bool ferry_fiber_set_running(ferry_fibers *L, zend_object *fiber, uint32_t id, bool running);
/*
 * ferry_fiber_answer.c: the usual outcome, answered: 1 answered, 0 the PHP path's (nothing
 * done), -1 the relay write failed (a RelayException is pending). *result may be replaced
 * by the Response made from a string or an array.
 */
int ferry_fiber_answer_plain(ferry_fibers *L, zend_object *fiber, zend_object *placeholder, ferry_fiber_slot *slot, zval *result);

#endif
