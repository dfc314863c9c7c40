/*
 * Ferry\Ext\http_serve(): php/worker's sequential loop (SequentialRunner) and
 * HttpWorker::handle() in C, for the usual request only.
 *
 * It reads the relay itself and serves each job frame whose request the extension can
 * build (request_read()'s subset, no uploads): the handler is called as handle() calls it,
 * and when its outcome is the usual one (a Response with a body, no output, nothing set
 * through PHP's header functions) the answer frame is written here, the reset hooks run
 * before it and the terminate hooks after it, as HttpWorker and WorkerSession run them. Any other
 * outcome is returned to NativeLoop (the session's $handed), which finishes it with
 * HttpWorker::resume() and calls again: PHP stays the reference for everything but the plain
 * case, and C never calls back into the SDK's runner. Anything else (a control frame, another
 * kind of job, a bad or oversized frame, state the PHP loop must see first) makes it return,
 * and SequentialRunner takes over until the next idle moment.
 *
 * The bytes read from the relay and not served yet stay in one buffer, a string the session
 * shares as $readAhead ([$readAheadOffset, $readAheadEnd) unserved): PHP takes them from there
 * (StreamParts during a job, WorkerSession::handBack() after a return), nothing is copied per
 * request, and the buffer stays parked in the session for the next call. A copy PHP keeps of
 * it is never written to: the loop writes only while it and the session hold the only references.
 *
 * The worker's state is the WorkerSession's, bound through the worker contract
 * (ferry_contract.c) once per session class: its version checked, its public properties found
 * by slot; a class of another version or shape is an Error, never a misplaced value.
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

/* What NativeLoop is told (its constants); the unserved bytes are in the session's $readAhead. */
#define SERVE_READ_HERE 0 /* nothing for PHP: Worker reads the relay itself */
#define SERVE_HANDED 1    /* bytes read ahead, or state PHP must look at */
#define SERVE_CLOSED 2    /* the server closed the relay */
#define SERVE_RESUME 3    /* the job in the session's $handed is HttpWorker::resume()'s to finish */

#define LOOP_READ_SIZE 65536
#define LOOP_BUFFER_SIZE (4 * LOOP_READ_SIZE)

typedef struct {
	zend_string *str; /* the buffer, LOOP_BUFFER_SIZE long: the session's $readAhead too */
	char *buf;
	size_t start, end; /* unserved bytes are buf[start .. end) */
	/* the session's $readAhead, $readAheadOffset and $readAheadEnd, found once per call */
	zval *ahead, *offset, *until;
} loop_buffer;

/*
 * The binding of the last session class (and its capture's class) seen: NativeLoop calls
 * again after every job PHP finishes, and binding anew would cost those ~20 lookups each.
 * Only class-level facts: objects are read from the session at every call.
 */
static ferry_loop bound;
static zend_class_entry *bound_session, *bound_capture;
/* http_serve() runs: a handler calling it again is refused */
static bool serving;

void ferry_loop_rshutdown(void)
{
	bound_session = bound_capture = NULL;
	serving = false;
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


/* The contract's binding for L->session: the one kept for its class, or a new one. */
bool ferry_loop_bind(ferry_loop *L)
{
	zend_object *session = L->session;
	if (session->ce == bound_session) {
		zval *capture = OBJ_PROP(session, bound.C.capture);
		bool sapi = Z_TYPE_P(OBJ_PROP(session, bound.C.sapi_output)) == IS_TRUE;
		if (Z_TYPE_P(capture) == IS_OBJECT && Z_OBJCE_P(capture) == bound_capture && sapi == bound.sapi) {
			*L = bound;
			L->session = session;
			L->capture = Z_OBJ_P(capture);
			return true;
		}
	}
	bound_session = NULL;
	if (!loop_init(L)) {
		return false;
	}
	L->cookie_key = zend_string_init_interned("_COOKIE", sizeof("_COOKIE") - 1, 0);
	bound = *L;
	bound_session = session->ce;
	bound_capture = L->capture->ce;
	return true;
}

bool ferry_loop_open(ferry_loop *L, const char *fn, zval *session, zval *handler, zval *placeholder)
{
	L->session = Z_OBJ_P(session);
	if (!ferry_loop_bind(L)) {
		return false;
	}
	L->placeholder = Z_OBJ_P(placeholder);
	L->max_payload = Z_LVAL_P(OBJ_PROP(L->session, L->C.max_payload));
	if (zend_fcall_info_init(handler, 0, &L->handler, &L->handler_cache, NULL, NULL) != SUCCESS) {
		zend_throw_error(NULL, "Ferry\\Ext\\%s(): the handler is not callable", fn);
		return false;
	}
	return true;
}

/* Whether the session's $readAhead is still this buffer: PHP sets it to null when it takes the bytes. */
static zend_always_inline bool buffer_shared(ferry_loop *L, loop_buffer *b)
{
	return Z_TYPE_P(b->ahead) == IS_STRING && Z_STR_P(b->ahead) == b->str;
}

static zend_always_inline void set_long(zval *slot, size_t v)
{
	ZVAL_LONG(slot, (zend_long) v);
}

/* A new buffer holding the unserved bytes from `from`, which the session shares from now on. */
static void buffer_new(ferry_loop *L, loop_buffer *b, const char *from, size_t len)
{
	zend_string *str = zend_string_alloc(LOOP_BUFFER_SIZE, 0);
	ZSTR_VAL(str)[LOOP_BUFFER_SIZE] = '\0';
	memcpy(ZSTR_VAL(str), from, len);
	zval v;
	ZVAL_STR(&v, str);
	ferry_assign(b->ahead, &v); /* the session's reference */
	if (b->str) {
		zend_string_release(b->str);
	}
	b->str = str; /* and ours */
	b->buf = ZSTR_VAL(str);
	b->start = 0;
	b->end = len;
	set_long(b->offset, 0);
	set_long(b->until, len);
}

/*
 * Before the buffer is written to: a reference PHP took besides the session's (a copy of
 * $readAhead in a variable) makes it a new one, so a string PHP holds never changes.
 */
static zend_always_inline void buffer_writable(ferry_loop *L, loop_buffer *b)
{
	if (UNEXPECTED(GC_REFCOUNT(b->str) != 2)) {
		buffer_new(L, b, b->buf + b->start, b->end - b->start);
	}
	zend_string_forget_hash_val(b->str);
}

/* The session's unserved range [from, to) of its $readAhead; false when it holds none (or no sane one). */
static bool ahead_range(ferry_loop *L, size_t *from, size_t *to)
{
	zval *ahead = OBJ_PROP(L->session, L->C.ahead);
	zend_long f = Z_LVAL_P(OBJ_PROP(L->session, L->C.ahead_offset));
	zend_long t = Z_LVAL_P(OBJ_PROP(L->session, L->C.ahead_end));
	if (Z_TYPE_P(ahead) != IS_STRING || f < 0 || t <= f || (size_t) t > Z_STRLEN_P(ahead)) {
		return false;
	}
	*from = (size_t) f;
	*to = (size_t) t;
	return true;
}

/* Returned without serving: $read (the start of a frame PHP read) goes to the session's read-ahead, uncopied. */
static zend_long leave(ferry_loop *L, zend_string *pending, bool ahead)
{
	if (ZSTR_LEN(pending) > 0) {
		zval v;
		ZVAL_STR(&v, pending);
		ferry_assign(OBJ_PROP(L->session, L->C.ahead), &v);
		set_long(OBJ_PROP(L->session, L->C.ahead_offset), 0);
		set_long(OBJ_PROP(L->session, L->C.ahead_end), ZSTR_LEN(pending));
	}
	/* Complete frames among them are the PHP loop's to dispatch now; a frame's start only waits for more. */
	return ahead ? SERVE_HANDED : SERVE_READ_HERE;
}

/* The loop is done: the session keeps the buffer and where its unserved bytes are, unless PHP took them. */
static void buffer_park(ferry_loop *L, loop_buffer *b)
{
	if (buffer_shared(L, b)) {
		set_long(b->offset, b->start);
		set_long(b->until, b->end);
	}
	zend_string_release(b->str);
	serving = false;
}

ZEND_FUNCTION(ferry_http_serve)
{
	zval *session, *handler, *placeholder, *in, *out;
	zend_string *pending;

	ZEND_PARSE_PARAMETERS_START(6, 6)
		Z_PARAM_OBJECT(session)
		Z_PARAM_OBJECT_OF_CLASS(handler, zend_ce_closure)
		Z_PARAM_OBJECT(placeholder)
		Z_PARAM_RESOURCE(in)
		Z_PARAM_RESOURCE(out)
		Z_PARAM_STR(pending)
	ZEND_PARSE_PARAMETERS_END();

	if (serving) {
		zend_throw_error(NULL, "Ferry\\Ext\\http_serve(): already serving");
		RETURN_THROWS();
	}
	ferry_loop L = {0};
	if (!ferry_loop_open(&L, "http_serve", session, handler, placeholder)) {
		RETURN_THROWS();
	}
	zend_long max_payload = L.max_payload;
	if (!ferry_relay_fds(in, out, &L.in, &L.out)) {
		RETURN_THROWS();
	}
	size_t from = 0, to = 0;
	bool ahead = ahead_range(&L, &from, &to);
	if (ahead && ZSTR_LEN(pending) > 0) {
		zend_throw_error(NULL, "Ferry\\Ext\\http_serve(): $read given while the session's $readAhead holds "
			"unserved bytes (WorkerSession::handBack() takes them first)");
		RETURN_THROWS();
	}
	if (L.in < 0 || L.out < 0 || !ferry_loop_worker_idle(&L) || !ferry_loop_capture_clean(&L)
		|| (ahead && to - from >= LOOP_BUFFER_SIZE)) {
		RETURN_LONG(leave(&L, pending, ahead));
	}
	if (ZSTR_LEN(pending) > 0) {
		/* The start of a frame too large for the buffer stays with the PHP loop, uncopied. */
		ferry_frame f;
		ferry_frame_status st = ferry_frame_read((const uint8_t *) ZSTR_VAL(pending), ZSTR_LEN(pending),
			(uint64_t) max_payload, &f);
		if (st != FERRY_FRAME_NEED_MORE || f.size > LOOP_BUFFER_SIZE || ZSTR_LEN(pending) >= LOOP_BUFFER_SIZE) {
			RETURN_LONG(leave(&L, pending, false));
		}
	}
	serving = true;
	/* The buffer parked in the session when it is the only holder, else a new one. */
	loop_buffer b = {0};
	b.ahead = OBJ_PROP(L.session, L.C.ahead);
	b.offset = OBJ_PROP(L.session, L.C.ahead_offset);
	b.until = OBJ_PROP(L.session, L.C.ahead_end);
	zval *parked = b.ahead;
	if (Z_TYPE_P(parked) == IS_STRING && ZSTR_LEN(Z_STR_P(parked)) == LOOP_BUFFER_SIZE
		&& !ZSTR_IS_INTERNED(Z_STR_P(parked)) && GC_REFCOUNT(Z_STR_P(parked)) == 1) {
		b.str = zend_string_copy(Z_STR_P(parked));
		b.buf = ZSTR_VAL(b.str);
		b.start = ahead ? from : 0;
		b.end = ahead ? to : 0;
		set_long(b.offset, b.start);
		if (ZSTR_LEN(pending) > 0) {
			zend_string_forget_hash_val(b.str);
			memcpy(b.buf, ZSTR_VAL(pending), ZSTR_LEN(pending));
			b.end = ZSTR_LEN(pending);
		}
		set_long(b.until, b.end);
	} else if (ahead) {
		buffer_new(&L, &b, Z_STRVAL_P(parked) + from, to - from);
	} else {
		buffer_new(&L, &b, ZSTR_VAL(pending), ZSTR_LEN(pending));
	}
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
				/* Consumed before the handler runs: what follows is what StreamParts takes. */
				b.start += f.size;
				/* Set to a long at the start; a store of the value alone on the way of every job */
				Z_LVAL_P(b.offset) = (zend_long) b.start;
				ferry_job_outcome outcome = ferry_loop_serve_job(&L, f.options[1], payload, clen, body);
				zend_string_release(body);
				if (EXPECTED(outcome == JOB_DONE)) {
					/* Its type alone: PHP takes the bytes by setting $readAhead to null, and a
					 * string put there instead is caught before the next read (buffer_shared()). */
					if (Z_TYPE_P(b.ahead) != IS_STRING || !ferry_loop_worker_idle(&L)) {
						break;
					}
					continue;
				}
				if (outcome == JOB_THROWN) {
					buffer_park(&L, &b);
					RETURN_THROWS();
				}
				if (outcome == JOB_RESUME) {
					status = SERVE_RESUME;
				} else {
					b.start = frame_start; /* declined */
				}
				break;
			}
			if (st != FERRY_FRAME_NEED_MORE) {
				break; /* a fault PHP's parser names */
			}
			if (f.size > LOOP_BUFFER_SIZE) {
				status = SERVE_READ_HERE; /* too large to hold here: the PHP loop reads it */
				break;
			}
		}
		if (!buffer_shared(&L, &b)) {
			break; /* PHP took the bytes and read the relay itself: the next read is its own */
		}
		if (!ferry_loop_capture_clean(&L)) {
			/* Output between jobs: SyncCapture::release() sends it to the log before PHP's read. */
			if (avail == 0) {
				status = SERVE_READ_HERE;
			}
			break;
		}
		buffer_writable(&L, &b);
		if (b.start > 0) {
			memmove(b.buf, b.buf + b.start, avail);
			b.start = 0;
			b.end = avail;
			set_long(b.until, b.end);
		}
		size_t room = LOOP_BUFFER_SIZE - b.end;
		ssize_t n = read(L.in, b.buf + b.end, room < LOOP_READ_SIZE ? room : LOOP_READ_SIZE);
		if (n > 0) {
			b.end += (size_t) n;
			set_long(b.until, b.end);
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
	buffer_park(&L, &b);
	RETURN_LONG(status);
}
