/*
 * Ferry\Ext\http_serve(): php/worker's sequential loop (SequentialRunner) and
 * HttpWorker::handle() in C, for the usual request only.
 *
 * It reads the relay itself and serves each job frame whose request the extension can
 * build (request_read()'s subset, no uploads): the handler is called as handle() calls it,
 * and when its outcome is the usual one (a Response with a body, no output, nothing set
 * through PHP's header functions) the answer frame is written here, the reset hooks run
 * before it and the terminate hooks after it, as HttpWorker and WorkerSession run them. Any other
 * outcome is finished by HttpWorker::resume() through the $resume closure, so PHP stays the
 * reference for everything but the plain case. Anything else (a control frame, another
 * kind of job, a bad or oversized frame, state the PHP loop must see first) makes it return
 * the bytes it has not served, and SequentialRunner takes over until the next idle moment.
 *
 * The worker's state is the WorkerSession's, bound through the worker contract
 * (ferry_contract.c) once per call: its version checked, its public properties found by
 * slot; a class of another version or shape is an Error, never a misplaced value.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <errno.h>
#include <unistd.h>

#include "php.h"
#include "main/php_output.h"
#include "main/php_streams.h"
#include "zend_closures.h"
#include "zend_exceptions.h"
#include "php_ferry.h"
#include "ferry_frame.h"
#include "ferry_loop.h"
#include "ferry_job_common.h"

/* What SequentialRunner is told through WorkerSession::handBack() (NativeLoop's constants). */
#define SERVE_READ_HERE 0 /* nothing for PHP: Worker reads the relay itself */
#define SERVE_HANDED 1    /* the returned bytes, or state PHP must look at */
#define SERVE_CLOSED 2    /* the server closed the relay */

#define LOOP_READ_SIZE 65536
#define LOOP_BUFFER_SIZE (4 * LOOP_READ_SIZE)

typedef struct {
	zend_string *pending; /* what the PHP loop read of a frame: the buffer starts with it */
	char *buf;
	size_t start, end; /* unserved bytes are buf[start .. end) */
	bool taken;        /* http_serve_unread() handed them to PHP: read no more */
} loop_buffer;

/* The running http_serve()'s bytes, for http_serve_unread(). */
static loop_buffer *active;

void ferry_loop_rshutdown(void)
{
	active = NULL;
}

#define CLASS_TYPED 0

static bool loop_init(ferry_loop *L)
{
	if (!ferry_contract_bind("http_serve", L->session, &L->C)) {
		return false;
	}
	zval *capture = OBJ_PROP(L->session, L->C.capture);
	if (Z_TYPE_P(capture) != IS_OBJECT) {
		zend_throw_error(NULL, "Ferry\\Ext\\http_serve(): the worker has no output capture");
		return false;
	}
	L->capture = Z_OBJ_P(capture);
	zend_class_entry *cce = L->capture->ce;
	/* SapiCapture's output is ferry_output.c's: only its $job is read here. */
	L->sapi = Z_TYPE_P(OBJ_PROP(L->session, L->C.sapi_output)) == IS_TRUE;
	if (!ferry_contract_prop("http_serve", cce, "job", CLASS_TYPED, &L->c_job) || (!L->sapi
		&& (!ferry_contract_prop("http_serve", cce, "refusals", MAY_BE_LONG, &L->c_refusals)
		|| !ferry_contract_prop("http_serve", cce, "flushed", MAY_BE_STRING, &L->c_flushed)
		|| !ferry_contract_prop("http_serve", cce, "level", MAY_BE_LONG, &L->c_level)))) {
		return false;
	}
	L->request_ce = ferry_find_class("http_serve", "Ferry\\Worker\\Http\\Request");
	L->response_ce = ferry_find_class("http_serve", "Ferry\\Worker\\Http\\Response");
	if (!L->request_ce || !L->response_ce) {
		return false;
	}
	if (!ferry_contract_prop("http_serve", L->request_ce, "cookies", MAY_BE_ARRAY, &L->r_cookies)
		|| !ferry_contract_prop("http_serve", L->request_ce, "uploads", MAY_BE_ARRAY, &L->r_uploads)
		|| !ferry_contract_prop("http_serve", L->response_ce, "parts", CLASS_TYPED, &L->p_parts)
		|| !ferry_contract_prop("http_serve", L->response_ce, "file", MAY_BE_ARRAY | MAY_BE_NULL, &L->p_file)
		|| !ferry_contract_prop("http_serve", L->response_ce, "body", MAY_BE_STRING, &L->p_body)
		|| !ferry_contract_prop("http_serve", L->response_ce, "preset", MAY_BE_STRING | MAY_BE_NULL, &L->p_preset)
		|| !ferry_contract_prop("http_serve", L->response_ce, "status", MAY_BE_LONG, &L->p_status)
		|| !(L->preset_contexts = ferry_contract_static("http_serve", L->response_ce, "presetContexts"))) {
		return false;
	}
	if (!ferry_find_response_fns("http_serve", L->response_ce, &L->context_fn, &L->html_fn, &L->json_fn)) {
		return false;
	}
	L->relay_exception = ferry_find_class("http_serve", "Ferry\\Worker\\Relay\\RelayException");
	return L->relay_exception != NULL;
}

/* [bytes not served, status] */
static void hand_back(zval *return_value, loop_buffer *b, int status)
{
	array_init_size(return_value, 2);
	if (!b->buf) {
		add_next_index_str(return_value, zend_string_copy(b->pending));
	} else if (b->end > b->start) {
		add_next_index_stringl(return_value, b->buf + b->start, b->end - b->start);
	} else {
		add_next_index_str(return_value, ZSTR_EMPTY_ALLOC());
	}
	add_next_index_long(return_value, status);
}

ZEND_FUNCTION(ferry_http_serve)
{
	zval *session, *handler, *resume_fn, *terminate_fn, *placeholder, *in, *out;
	zend_string *pending;

	ZEND_PARSE_PARAMETERS_START(8, 8)
		Z_PARAM_OBJECT(session)
		Z_PARAM_OBJECT_OF_CLASS(handler, zend_ce_closure)
		Z_PARAM_OBJECT_OF_CLASS(resume_fn, zend_ce_closure)
		Z_PARAM_OBJECT_OF_CLASS(terminate_fn, zend_ce_closure)
		Z_PARAM_OBJECT(placeholder)
		Z_PARAM_RESOURCE(in)
		Z_PARAM_RESOURCE(out)
		Z_PARAM_STR(pending)
	ZEND_PARSE_PARAMETERS_END();

	loop_buffer b = {0};
	b.pending = pending;
	if (active) {
		zend_throw_error(NULL, "Ferry\\Ext\\http_serve(): already serving");
		RETURN_THROWS();
	}
	ferry_loop L = {0};
	L.session = Z_OBJ_P(session);
	L.placeholder = Z_OBJ_P(placeholder);
	if (!loop_init(&L)) {
		RETURN_THROWS();
	}
	zend_long max_payload = L.max_payload = Z_LVAL_P(OBJ_PROP(L.session, L.C.max_payload));
	if (!ferry_relay_fds(in, out, &L.in, &L.out)) {
		RETURN_THROWS();
	}
	if (L.in < 0 || L.out < 0 || !ferry_loop_worker_idle(&L) || !ferry_loop_capture_clean(&L)) {
		hand_back(return_value, &b, SERVE_READ_HERE);
		return;
	}
	if (zend_fcall_info_init(handler, 0, &L.handler, &L.handler_cache, NULL, NULL) != SUCCESS
		|| zend_fcall_info_init(resume_fn, 0, &L.resume, &L.resume_cache, NULL, NULL) != SUCCESS
		|| zend_fcall_info_init(terminate_fn, 0, &L.terminate, &L.terminate_cache, NULL, NULL) != SUCCESS) {
		zend_throw_error(NULL, "Ferry\\Ext\\http_serve(): a closure is not callable");
		RETURN_THROWS();
	}
	L.cookie_key = zend_string_init_interned("_COOKIE", sizeof("_COOKIE") - 1, 0);

	if (ZSTR_LEN(pending) > 0) {
		/* The start of a frame too large for the buffer stays with the PHP loop, uncopied. */
		ferry_frame f;
		ferry_frame_status st = ferry_frame_read((const uint8_t *) ZSTR_VAL(pending), ZSTR_LEN(pending),
			(uint64_t) max_payload, &f);
		if (st != FERRY_FRAME_NEED_MORE || f.size > LOOP_BUFFER_SIZE || ZSTR_LEN(pending) >= LOOP_BUFFER_SIZE) {
			hand_back(return_value, &b, SERVE_READ_HERE);
			return;
		}
	}
	b.buf = emalloc(LOOP_BUFFER_SIZE);
	memcpy(b.buf, ZSTR_VAL(pending), ZSTR_LEN(pending));
	b.end = ZSTR_LEN(pending);
	active = &b;
	int status = SERVE_HANDED;
	for (;;) {
		size_t avail = b.end - b.start;
		if (avail > 0) {
			ferry_frame f;
			ferry_frame_status st = ferry_frame_read((const uint8_t *) b.buf + b.start, avail, (uint64_t) max_payload, &f);
			if (st == FERRY_FRAME_OK) {
				if ((f.flags & FRAME_CONTROL) || f.option_count != 2 || f.options[0] > f.length || !ferry_loop_capture_clean(&L)) {
					break; /* PHP's to dispatch */
				}
				const char *payload = b.buf + b.start + f.payload_offset;
				size_t clen = f.options[0];
				zend_string *body = f.length > clen ? zend_string_init(payload + clen, f.length - clen, 0)
					: ZSTR_EMPTY_ALLOC();
				size_t frame_start = b.start;
				/* Consumed before the handler runs: what follows is what http_serve_unread() hands over. */
				b.start += f.size;
				ferry_job_outcome outcome = ferry_loop_serve_job(&L, f.options[1], payload, clen, body);
				zend_string_release(body);
				if (outcome == JOB_THROWN) {
					efree(b.buf);
					active = NULL;
					RETURN_THROWS();
				}
				if (outcome == JOB_DECLINED) {
					b.start = frame_start;
					break;
				}
				if (b.taken || !ferry_loop_worker_idle(&L)) {
					break;
				}
				continue;
			}
			if (st != FERRY_FRAME_NEED_MORE) {
				break; /* a fault PHP's parser names */
			}
			if (f.size > LOOP_BUFFER_SIZE) {
				status = SERVE_READ_HERE; /* too large to hold here: the PHP loop reads it */
				break;
			}
		}
		if (b.taken) {
			break;
		}
		if (!ferry_loop_capture_clean(&L)) {
			/* Output between jobs: SyncCapture::release() sends it to the log before PHP's read. */
			if (avail == 0) {
				status = SERVE_READ_HERE;
			}
			break;
		}
		if (b.start > 0) {
			memmove(b.buf, b.buf + b.start, avail);
			b.start = 0;
			b.end = avail;
		}
		size_t room = LOOP_BUFFER_SIZE - b.end;
		ssize_t n = read(L.in, b.buf + b.end, room < LOOP_READ_SIZE ? room : LOOP_READ_SIZE);
		if (n > 0) {
			b.end += (size_t) n;
			continue;
		}
		if (n == 0) {
			status = SERVE_CLOSED;
			break;
		}
		if (errno == EINTR && !zend_atomic_bool_load_ex(&EG(vm_interrupt))) {
			continue;
		}
		/* A signal for PHP to handle, or an error PHP's own read will name. */
		if (avail == 0) {
			status = SERVE_READ_HERE;
		}
		break;
	}
	active = NULL;
	hand_back(return_value, &b, status);
	efree(b.buf);
}

/* The bytes the running http_serve() read and has not served yet, which it then leaves to PHP. */
ZEND_FUNCTION(ferry_http_serve_unread)
{
	ZEND_PARSE_PARAMETERS_NONE();

	if (!active) {
		RETURN_EMPTY_STRING();
	}
	active->taken = true;
	if (active->end == active->start) {
		RETURN_EMPTY_STRING();
	}
	RETVAL_STRINGL(active->buf + active->start, active->end - active->start);
	active->start = active->end;
}
