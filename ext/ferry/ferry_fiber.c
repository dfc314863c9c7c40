/*
 * Ferry\Ext\fiber_serve(): what php/worker's FiberRunner does while it has nothing to wait
 * for (no job running, nothing on the event loop), in C, for HttpWorker's usual request.
 *
 * It reads the relay itself and runs each job frame whose request the extension can build
 * in a Fiber, as FiberPool would: the Fiber (its body is Ferry\Ext\fiber_body(),
 * ferry_fiber_job.c) stays the same from job to job while none waits, so the hot path
 * creates no Job, Payload or Frame object and calls no PHP of the SDK. When a job waits
 * (its handler suspended the Fiber on the event loop), it is promoted to a Job of
 * FiberRunner's (NativeFibers::promote()) and the bytes not served go back to the PHP
 * runner, which drives the loop until it is idle again; the Fiber finishes that job
 * through PHP. Anything else (a control frame, a request the extension does not build,
 * state the runner must see) hands the bytes back too, as http_serve() does.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <errno.h>
#include <unistd.h>

#include "php.h"
#include "main/php_streams.h"
#include "zend_closures.h"
#include "zend_exceptions.h"
#include "zend_fibers.h"
#include "php_ferry.h"
#include "ferry_frame.h"
#include "ferry_fiber.h"
#include "ferry_job_common.h"

/* NativeLoop's constants: what FiberRunner::serveNative() is told. */
#define SERVE_READ_HERE 0
#define SERVE_HANDED 1
#define SERVE_CLOSED 2

#define FIBER_READ_SIZE 65536
#define FIBER_BUFFER_SIZE (4 * FIBER_READ_SIZE)
#define FRAME_CONTROL 0x01

ferry_fiber_handoff *ferry_fiber_next;
ferry_fibers *ferry_fiber_serving;
zend_long ferry_fiber_served;

void ferry_fiber_rshutdown(void)
{
	ferry_fiber_next = NULL;
	ferry_fiber_serving = NULL;
}

static bool empty_array(zval *v)
{
	return Z_TYPE_P(v) == IS_ARRAY && zend_hash_num_elements(Z_ARRVAL_P(v)) == 0;
}

static zend_fiber_status fiber_status(zend_object *fiber)
{
	return ((zend_fiber *) ((char *) fiber - XtOffsetOf(zend_fiber, std)))->context.status;
}

/* The Fiber for the next job: the one kept from the last job, a parked one, or a new one. */
static bool acquire(ferry_fibers *L, zval *fiber, zval *placeholder)
{
	if (Z_TYPE_P(fiber) == IS_OBJECT) {
		return true;
	}
	zval pair;
	ferry_fiber_call(L->state, "acquire", &pair, 0, NULL);
	if (EG(exception)) {
		zval_ptr_dtor(&pair);
		return false;
	}
	zval *f = Z_TYPE(pair) == IS_ARRAY ? zend_hash_index_find(Z_ARRVAL(pair), 0) : NULL;
	zval *p = Z_TYPE(pair) == IS_ARRAY ? zend_hash_index_find(Z_ARRVAL(pair), 1) : NULL;
	if (!f || !p || Z_TYPE_P(f) != IS_OBJECT || Z_OBJCE_P(f) != zend_ce_fiber || Z_TYPE_P(p) != IS_OBJECT) {
		zval_ptr_dtor(&pair);
		zend_throw_error(NULL, "Ferry\\Ext\\fiber_serve(): NativeFibers::acquire() did not return a Fiber and a Job");
		return false;
	}
	ZVAL_COPY(fiber, f);
	ZVAL_COPY(placeholder, p);
	zval_ptr_dtor(&pair);
	return true;
}

/* The Fiber kept from the last job goes back to NativeFibers' parked ones. */
static void release(ferry_fibers *L, zval *fiber, zval *placeholder)
{
	if (Z_TYPE_P(fiber) != IS_OBJECT) {
		return;
	}
	zval args[2], ret;
	ZVAL_COPY_VALUE(&args[0], fiber);
	ZVAL_COPY_VALUE(&args[1], placeholder);
	/* Not while an exception unwinds: a parked Fiber is resumed again only by this loop. */
	if (!EG(exception)) {
		ferry_fiber_call(L->state, "release", &ret, 2, args);
		zval_ptr_dtor(&ret);
	}
	zval_ptr_dtor(fiber);
	zval_ptr_dtor(placeholder);
	ZVAL_UNDEF(fiber);
	ZVAL_UNDEF(placeholder);
}

/* Runs one job in a Fiber until it is done or waits; false when an exception unwinds. */
static bool start_job(ferry_fibers *L, zval *fiber, zval *placeholder, zval *request, uint32_t id, const char *context,
	size_t clen, zend_string *body, bool *handed, bool *waited)
{
	int outcome = FIBER_RUNNING;
	ferry_fiber_slot *slot = NULL;
	bool registered = false;
	ferry_fiber_handoff h;
	h.fiber = Z_OBJ_P(fiber);
	ZVAL_COPY_VALUE(&h.request, request);
	h.id = id;
	h.context = context;
	h.clen = clen;
	h.body = body;
	h.outcome = &outcome;
	h.slot = &slot;
	h.registered = &registered;
	ferry_fiber_next = &h;
	zval ret, args[2];
	if (fiber_status(Z_OBJ_P(fiber)) == ZEND_FIBER_STATUS_INIT) {
		ZVAL_OBJ(&args[0], L->state);
		ZVAL_COPY_VALUE(&args[1], placeholder);
		ferry_fiber_call(Z_OBJ_P(fiber), "start", &ret, 2, args);
	} else {
		ZVAL_TRUE(&args[0]);
		ferry_fiber_call(Z_OBJ_P(fiber), "resume", &ret, 1, args);
	}
	zval_ptr_dtor(&ret);
	if (ferry_fiber_next == &h) {
		/* The body never took it (a Fiber not ours to resume): nothing ran. */
		ferry_fiber_next = NULL;
		zval_ptr_dtor(&h.request);
		if (!EG(exception)) {
			zend_throw_error(NULL, "Ferry\\Ext\\fiber_serve(): the Fiber did not take its job");
		}
		return false;
	}
	if (EG(exception)) {
		return false;
	}
	if (outcome == FIBER_PARKED) {
		*handed = registered;
		return true;
	}
	if (outcome == FIBER_ENDED || outcome == FIBER_BROKEN || !slot) {
		/* The job failed, and its Fiber with it; after a broken relay the runner throws. */
		zval_ptr_dtor(fiber);
		zval_ptr_dtor(placeholder);
		ZVAL_UNDEF(fiber);
		ZVAL_UNDEF(placeholder);
		*handed = registered || outcome != FIBER_ENDED;
		return true;
	}
	/* It waits: from now on it is one of FiberRunner's jobs, and the runner drives the loop. */
	slot->detached = true;
	*handed = true;
	*waited = true;
	bool ok = true;
	if (!slot->job) {
		zval pargs[5], job;
		ZVAL_COPY_VALUE(&pargs[0], fiber);
		ZVAL_COPY_VALUE(&pargs[1], placeholder);
		ZVAL_LONG(&pargs[2], id);
		ZVAL_STRINGL_FAST(&pargs[3], context, clen);
		ZVAL_STR_COPY(&pargs[4], body);
		ferry_fiber_call(L->state, "promote", &job, 5, pargs);
		zval_ptr_dtor(&pargs[3]);
		zval_ptr_dtor(&pargs[4]);
		if (EG(exception) || Z_TYPE(job) != IS_OBJECT) {
			zval_ptr_dtor(&job);
			ok = false;
		} else {
			slot->job = Z_OBJ(job); /* the slot's reference now */
		}
	}
	if (ok) {
		ferry_fiber_call(L->state, "waiting", &ret, 0, NULL);
		zval_ptr_dtor(&ret);
		ok = !EG(exception);
	}
	zval_ptr_dtor(fiber);
	zval_ptr_dtor(placeholder);
	ZVAL_UNDEF(fiber);
	ZVAL_UNDEF(placeholder);
	return ok;
}

/* [bytes not served, status] */
static void hand_back(zval *return_value, zend_string *pending, const char *buf, size_t start, size_t end, int status)
{
	array_init_size(return_value, 2);
	if (!buf) {
		add_next_index_str(return_value, zend_string_copy(pending));
	} else if (end > start) {
		add_next_index_stringl(return_value, buf + start, end - start);
	} else {
		add_next_index_str(return_value, ZSTR_EMPTY_ALLOC());
	}
	add_next_index_long(return_value, status);
}

ZEND_FUNCTION(ferry_fiber_serve)
{
	zval *state, *session, *handler, *in, *out;
	zend_string *pending;
	zend_long room;
	bool once;

	ZEND_PARSE_PARAMETERS_START(8, 8)
		Z_PARAM_OBJECT(state)
		Z_PARAM_OBJECT(session)
		Z_PARAM_OBJECT_OF_CLASS(handler, zend_ce_closure)
		Z_PARAM_RESOURCE(in)
		Z_PARAM_RESOURCE(out)
		Z_PARAM_STR(pending)
		Z_PARAM_LONG(room)
		Z_PARAM_BOOL(once)
	ZEND_PARSE_PARAMETERS_END();

	if (ferry_fiber_serving) {
		zend_throw_error(NULL, "Ferry\\Ext\\fiber_serve(): already serving");
		RETURN_THROWS();
	}
	if (EG(active_fiber)) {
		zend_throw_error(NULL, "Ferry\\Ext\\fiber_serve(): called inside a Fiber");
		RETURN_THROWS();
	}
	ferry_fibers L = {0};
	L.state = Z_OBJ_P(state);
	L.session = Z_OBJ_P(session);
	if (!ferry_fiber_init(&L)) {
		RETURN_THROWS();
	}
	zend_long max_payload = L.max_payload;
	if (!ferry_relay_fds(in, out, &L.in, &L.out)) {
		RETURN_THROWS();
	}
	if (L.in < 0 || L.out < 0 || !ferry_fiber_worker_idle(&L)) {
		hand_back(return_value, pending, NULL, 0, 0, SERVE_READ_HERE);
		return;
	}
	if (zend_fcall_info_init(handler, 0, &L.handler, &L.handler_cache, NULL, NULL) != SUCCESS) {
		zend_throw_error(NULL, "Ferry\\Ext\\fiber_serve(): the handler is not callable");
		RETURN_THROWS();
	}
	if (ZSTR_LEN(pending) > 0) {
		ferry_frame f;
		ferry_frame_status st = ferry_frame_read((const uint8_t *) ZSTR_VAL(pending), ZSTR_LEN(pending),
			(uint64_t) max_payload, &f);
		if (st != FERRY_FRAME_NEED_MORE || f.size > FIBER_BUFFER_SIZE || ZSTR_LEN(pending) >= FIBER_BUFFER_SIZE) {
			hand_back(return_value, pending, NULL, 0, 0, SERVE_READ_HERE);
			return;
		}
	}
	char *buf = emalloc(FIBER_BUFFER_SIZE);
	memcpy(buf, ZSTR_VAL(pending), ZSTR_LEN(pending));
	size_t start = 0, end = ZSTR_LEN(pending);
	zval fiber, placeholder;
	ZVAL_UNDEF(&fiber);
	ZVAL_UNDEF(&placeholder);
	ferry_fiber_serving = &L;
	int status = SERVE_HANDED;
	bool thrown = false, read_once = false;
	for (;;) {
		size_t avail = end - start;
		if (avail > 0) {
			ferry_frame f;
			ferry_frame_status st = ferry_frame_read((const uint8_t *) buf + start, avail, (uint64_t) max_payload, &f);
			if (st == FERRY_FRAME_OK) {
				if ((f.flags & FRAME_CONTROL) || f.option_count != 2 || f.options[0] > f.length || room <= 0) {
					break; /* the PHP runner's to dispatch, or to queue until a slot is free */
				}
				const char *payload = buf + start + f.payload_offset;
				size_t clen = f.options[0];
				zend_string *body = f.length > clen ? zend_string_init(payload + clen, f.length - clen, 0)
					: ZSTR_EMPTY_ALLOC();
				zval request;
				int built = ferry_request_build(payload, clen, body, &request);
				if (built < 0) {
					zend_clear_exception(); /* HttpWorker::handle() throws it again, into a 500 answer */
				}
				if (built <= 0 || Z_OBJCE(request) != L.request_ce
					|| !empty_array(OBJ_PROP(Z_OBJ(request), L.r_uploads))) {
					if (built > 0) {
						zval_ptr_dtor(&request);
					}
					zend_string_release(body);
					break;
				}
				if (!acquire(&L, &fiber, &placeholder)) {
					zval_ptr_dtor(&request);
					zend_string_release(body);
					thrown = true;
					break;
				}
				start += f.size;
				bool handed = false, waited = false;
				/* WorkerSession::dispatch(): the server may hold jobs until we say all of ours wait. */
				ZVAL_BOOL(OBJ_PROP(L.session, L.C.since), Z_TYPE_P(OBJ_PROP(L.session, L.C.reports)) == IS_TRUE);
				bool ok = start_job(&L, &fiber, &placeholder, &request, f.options[1], payload, clen, body, &handed, &waited);
				zend_string_release(body);
				if (!ok) {
					thrown = true;
					break;
				}
				if (waited) {
					room--;
				}
				/* Called from the runner's loop, a job that waits changes nothing for the next ones. */
				if ((handed && !(once && waited)) || !ferry_fiber_worker_idle(&L)) {
					break;
				}
				continue;
			}
			if (st != FERRY_FRAME_NEED_MORE) {
				break; /* a fault the PHP parser names */
			}
			if (f.size > FIBER_BUFFER_SIZE) {
				status = SERVE_READ_HERE;
				break;
			}
		}
		if (once && read_once) {
			break; /* the relay was readable once: another read could block the runner's loop */
		}
		if (start > 0) {
			memmove(buf, buf + start, avail);
			start = 0;
			end = avail;
		}
		size_t space = FIBER_BUFFER_SIZE - end;
		ssize_t n = read(L.in, buf + end, space < FIBER_READ_SIZE ? space : FIBER_READ_SIZE);
		read_once = true;
		if (n > 0) {
			end += (size_t) n;
			continue;
		}
		if (n == 0) {
			status = SERVE_CLOSED;
			break;
		}
		if (errno == EINTR && !zend_atomic_bool_load_ex(&EG(vm_interrupt))) {
			continue;
		}
		if (avail == 0) {
			status = SERVE_READ_HERE;
		}
		break;
	}
	ferry_fiber_serving = NULL;
	release(&L, &fiber, &placeholder);
	if (thrown || EG(exception)) {
		efree(buf);
		RETURN_THROWS();
	}
	hand_back(return_value, pending, buf, start, end, status);
	efree(buf);
}

/* How many jobs fiber_serve() answered without the SDK's PHP: for tests and diagnostics. */
ZEND_FUNCTION(ferry_fiber_served)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_LONG(ferry_fiber_served);
}
