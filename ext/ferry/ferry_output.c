/*
 * A job's output taken below PHP's output layer, at the SAPI's write, as FPM sends it.
 *
 * php/worker used to keep a job's output in an output buffer of its own that could not be
 * removed, so `while (ob_get_level()) ob_end_clean();` never ended. Here the job's output
 * is what PHP hands the SAPI (sapi_module.ub_write), and each job starts with one ordinary
 * removable "default output handler" of 4096 bytes, the one php_request_startup() opens
 * under php.ini-production's output_buffering: ob_get_level() is 1, ob_get_clean() at the
 * top returns what was echoed so far, the loop above discards it and ends, what is echoed
 * after it goes straight to the SAPI, and the buffers left open are flushed into the
 * answer at the end, as PHP does at the end of a request.
 *
 * Outside a job (between jobs, before and after the loop) the worker's output goes to
 * STDERR, the log, since STDOUT may be the relay ("pipes"); the CLI's own write is only
 * restored at the end of the process.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <errno.h>
#include <unistd.h>

#include "php.h"
#include "SAPI.h"
#include "main/php_output.h"
#include "zend_smart_str.h"
#include "php_ferry.h"

/* php.ini-production's output_buffering: the size at which FPM's first buffer flushes. */
#define FERRY_OUTPUT_CHUNK 4096

static size_t (*orig_ub_write)(const char *str, size_t len);
static void (*orig_flush)(void *server_context);
static bool hooked;
/* hooked for the whole process (the worker's capture), not for one job */
static bool installed;
static bool capturing;
/* the output level the job started from: its default buffer is the one above */
static int base_level;
static smart_str collected;
/* The default buffer this job was given (compared, never read: the application may have
 * closed it), and the one kept off the stack between jobs: creating and freeing one per
 * request cost an eighth of ext/ferry's whole loop for a hello request. */
static php_output_handler *pushed, *spare;

static void write_stderr(const char *str, size_t len)
{
	while (len > 0) {
		ssize_t n = write(STDERR_FILENO, str, len);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			return; /* the log is gone: nothing else can take it */
		}
		str += n;
		len -= (size_t) n;
	}
}

static size_t ferry_ub_write(const char *str, size_t len)
{
	if (capturing) {
		smart_str_appendl(&collected, str, len);
	} else {
		write_stderr(str, len);
	}
	return len;
}

/* The CLI flushes stdout after every write (implicit_flush); nothing of ours is there. */
static void ferry_flush(void *server_context)
{
	if (!capturing && orig_flush) {
		orig_flush(server_context);
	}
}

static void hook(void)
{
	if (hooked) {
		return;
	}
	orig_ub_write = sapi_module.ub_write;
	orig_flush = sapi_module.flush;
	sapi_module.ub_write = ferry_ub_write;
	sapi_module.flush = ferry_flush;
	hooked = true;
}

static void unhook(void)
{
	if (!hooked) {
		return;
	}
	/* Only undo our own hook: another extension may have wrapped it since. */
	if (sapi_module.ub_write == ferry_ub_write) {
		sapi_module.ub_write = orig_ub_write;
	}
	if (sapi_module.flush == ferry_flush) {
		sapi_module.flush = orig_flush;
	}
	hooked = false;
}

/* What the job wrote, handed over; the collector starts empty again. */
static zend_string *take_collected(void)
{
	if (!collected.s || ZSTR_LEN(collected.s) == 0) {
		return ZSTR_EMPTY_ALLOC();
	}
	return smart_str_extract(&collected);
}

/* php_output_get_level() and the stack's top, inline: the usual request passes here five times. */
static inline int output_level(void)
{
	return OG(active) ? OG(handlers).top : 0;
}

static inline void stack_push(php_output_handler *h)
{
	zend_stack *stack = &OG(handlers);
	if (stack->top < stack->max && stack->size == sizeof(h)) {
		((php_output_handler **) stack->elements)[stack->top] = h;
		h->level = stack->top++; /* zend_stack_push() returns the index it filled */
	} else {
		h->level = zend_stack_push(stack, &h);
	}
	OG(active) = h;
}

static inline void stack_pop(void)
{
	zend_stack *stack = &OG(handlers);
	stack->top--;
	OG(active) = stack->top > 0 ? ((php_output_handler **) stack->elements)[stack->top - 1] : NULL;
}

/* Ends the buffers above level, each flushed into the one below; false at one that cannot be removed. */
static bool end_above(int level)
{
	while (output_level() > level) {
		/* php_output_end() would refuse with a notice, into the job's output. */
		if (!(OG(active)->flags & PHP_OUTPUT_HANDLER_REMOVABLE) || php_output_end() != SUCCESS) {
			return false;
		}
	}
	return true;
}

/* main/output.c's default handler function, as ob_start() without a callback gets it */
static php_output_handler_context_func_t default_func;

static bool is_default_buffer(const php_output_handler *h)
{
	return h && !(h->flags & PHP_OUTPUT_HANDLER_USER) && default_func && h->func.internal == default_func;
}

void ferry_output_begin(void)
{
	if (capturing) {
		return;
	}
	hook();
	if (installed && output_level() > 0) {
		/* Left open between jobs (a terminate hook): as at the end of a request, flushed, here to the log. */
		php_output_end_all();
	}
	base_level = output_level();
	capturing = true;
	pushed = NULL;
	php_output_handler *h = spare;
	if (h) {
		/* What php_output_handler_start() does, less its conflict checks, which name
		 * no default handler: the spare was started this way before. */
		spare = NULL;
		stack_push(h);
		pushed = h;
		return;
	}
	zval none;
	ZVAL_NULL(&none);
	h = php_output_handler_create_user(&none, FERRY_OUTPUT_CHUNK, PHP_OUTPUT_HANDLER_STDFLAGS);
	default_func = h->func.internal;
	if (php_output_handler_start(h) == SUCCESS) {
		pushed = h;
	} else {
		php_output_handler_free(&h);
	}
}

/* Takes the job's default buffer, empty and on top, off the stack to serve the next job. */
static bool keep_default(void)
{
	php_output_handler *top = OG(active);
	if (!pushed || top != pushed || output_level() != base_level + 1 || !is_default_buffer(top)
		|| top->buffer.used != 0 || top->buffer.size > 4 * FERRY_OUTPUT_CHUNK) {
		return false;
	}
	stack_pop();
	/* What php_output_handler_op() noted of this job's use of it. */
	top->flags &= ~(PHP_OUTPUT_HANDLER_STARTED | PHP_OUTPUT_HANDLER_DISABLED | PHP_OUTPUT_HANDLER_PROCESSED);
	spare = top;
	pushed = NULL;
	return true;
}

bool ferry_output_clean(void)
{
	if (!capturing) {
		return output_level() == 0 && (!collected.s || ZSTR_LEN(collected.s) == 0);
	}
	php_output_handler *top = OG(active);
	return output_level() == base_level + 1 && is_default_buffer(top) && top->buffer.used == 0
		&& (!collected.s || ZSTR_LEN(collected.s) == 0);
}

void ferry_output_drop(void)
{
	if (!capturing) {
		return;
	}
	if (!keep_default() && output_level() == base_level + 1 && is_default_buffer(OG(active))) {
		php_output_discard();
	}
	pushed = NULL;
	capturing = false;
	if (!installed) {
		unhook();
	}
}

static zend_string *output_take(void)
{
	if (!capturing) {
		return ZSTR_EMPTY_ALLOC();
	}
	/* A generator of a streamed answer goes on echoing: its default buffer stays. */
	if (end_above(base_level + 1) && output_level() == base_level + 1) {
		php_output_flush();
	}
	return take_collected();
}

static zend_string *output_end(void)
{
	if (!capturing) {
		return ZSTR_EMPTY_ALLOC();
	}
	bool kept = false;
	if (end_above(base_level + 1) && output_level() == base_level + 1) {
		php_output_flush();
		kept = keep_default();
	}
	if (!kept) {
		if (base_level == 0) {
			php_output_end_all(); /* as at the end of a request: removable or not */
		} else {
			end_above(base_level);
		}
	}
	pushed = NULL;
	zend_string *out = take_collected();
	capturing = false;
	if (!installed) {
		unhook();
	}
	return out;
}

void ferry_output_rshutdown(void)
{
	/* PHP flushed the buffers before RSHUTDOWN: a job cut short by exit() or a fatal
	 * error leaves its output here, for the log, as the worker's capture always did. */
	if (collected.s && ZSTR_LEN(collected.s) > 0) {
		write_stderr(ZSTR_VAL(collected.s), ZSTR_LEN(collected.s));
	}
	smart_str_free(&collected);
	php_output_handler_free(&spare);
	pushed = NULL;
	capturing = false;
	installed = false;
	unhook();
}

ZEND_FUNCTION(ferry_output_install)
{
	ZEND_PARSE_PARAMETERS_NONE();
	hook();
	installed = true;
	/* php.ini's output_buffering, or the bootstrap's: what is in them is not a job's. */
	if (!capturing && output_level() > 0) {
		php_output_end_all();
	}
}

ZEND_FUNCTION(ferry_output_begin)
{
	ZEND_PARSE_PARAMETERS_NONE();
	ferry_output_begin();
}

ZEND_FUNCTION(ferry_output_take)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_STR(output_take());
}

ZEND_FUNCTION(ferry_output_end)
{
	ZEND_PARSE_PARAMETERS_NONE();
	RETURN_STR(output_end());
}
