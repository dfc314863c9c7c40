/*
 * Ferry\Ext\fiber_io_enable(): pool.fiber_io's switch and its bridge to php/worker's loop.
 *
 * While on, a blocking socket operation or sleep()/usleep() called inside a Fiber asks the
 * $await / $sleep closures php/worker gave (FiberIo) to wait on Ferry's loop instead; they
 * answer null when the running Fiber is not one that loop runs (an app's own Fiber), and the
 * operation then blocks as PHP always did. Outside any Fiber, while Fibers may not switch
 * (destructors run by the GC: zend_fiber_switch_blocked()), inside an output handler, or
 * with an exception pending, nothing is asked and PHP's own code runs untouched.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <poll.h>
#include <unistd.h>

#include "php.h"
#include "main/php_network.h"
#include "main/php_output.h"
#include "zend_closures.h"
#include "zend_exceptions.h"
#include "zend_fibers.h"
#include "php_ferry.h"
#include "ferry_fiberio.h"

static bool fio_on;
static zval fio_await_cb;
static zval fio_sleep_cb;
static zif_handler fio_orig_sleep;
static zif_handler fio_orig_usleep;
static zif_handler fio_orig_fclose;

/*
 * PHP blocks switches while the GC runs destructors, but not inside an output handler: a
 * Fiber suspended there would leave the handler running (OG(running)) while other Fibers
 * echo, and their output is lost, so that case is refused here.
 */
bool ferry_fio_may_suspend(void)
{
	return fio_on && EG(active_fiber) != NULL && !zend_fiber_switch_blocked() && !EG(exception) && !OG(running);
}

/*
 * The loop selects on a stream of its own over a dup of fd: the caller's stream may hold
 * buffered bytes (fgets() refilling after half a line), which stream_select() counts as
 * readable, and the wait would never sleep.
 */
ferry_fio_wait ferry_fio_await(php_socket_t fd, bool write, const struct timeval *timeout)
{
	if (!ferry_fio_may_suspend()) {
		return FERRY_FIO_BLOCK;
	}
	int copy = dup(fd);
	if (copy < 0) {
		return FERRY_FIO_BLOCK;
	}
	php_stream *watch = php_stream_sock_open_from_socket(copy, NULL);
	if (!watch) {
		close(copy);
		return FERRY_FIO_BLOCK;
	}
	zval args[3], ret;
	php_stream_to_zval(watch, &args[0]);
	ZVAL_BOOL(&args[1], write);
	if (timeout) {
		ZVAL_DOUBLE(&args[2], (double) timeout->tv_sec + (double) timeout->tv_usec / 1e6);
	} else {
		ZVAL_NULL(&args[2]);
	}
	ZVAL_UNDEF(&ret);
	zval cb;
	ZVAL_COPY(&cb, &fio_await_cb); /* the closure may disable the hooks while it runs */
	call_user_function(NULL, NULL, &cb, &ret, 3, args);
	zval_ptr_dtor(&cb);
	zval_ptr_dtor(&args[0]); /* closes the dup */
	ferry_fio_wait result = FERRY_FIO_BLOCK;
	if (EG(exception)) {
		result = FERRY_FIO_FAILED;
	} else if (Z_TYPE(ret) == IS_TRUE) {
		result = FERRY_FIO_READY;
	} else if (Z_TYPE(ret) == IS_FALSE) {
		result = FERRY_FIO_TIMEOUT;
	}
	zval_ptr_dtor(&ret);
	return result;
}

/* True when $sleep took the wait: the Fiber slept on the loop. */
static bool fio_sleep(double seconds)
{
	if (!ferry_fio_may_suspend()) {
		return false;
	}
	zval arg, ret, cb;
	ZVAL_DOUBLE(&arg, seconds);
	ZVAL_UNDEF(&ret);
	ZVAL_COPY(&cb, &fio_sleep_cb);
	call_user_function(NULL, NULL, &cb, &ret, 1, &arg);
	zval_ptr_dtor(&cb);
	bool took = EG(exception) || Z_TYPE(ret) == IS_TRUE;
	zval_ptr_dtor(&ret);
	return took;
}

static ZEND_FUNCTION(ferry_fio_sleep)
{
	zend_long seconds;
	if (ferry_fio_may_suspend() && ZEND_NUM_ARGS() == 1 && Z_TYPE_P(ZEND_CALL_ARG(execute_data, 1)) == IS_LONG
		&& (seconds = Z_LVAL_P(ZEND_CALL_ARG(execute_data, 1))) >= 0 && fio_sleep((double) seconds)) {
		if (!EG(exception)) {
			RETURN_LONG(0);
		}
		return;
	}
	fio_orig_sleep(execute_data, return_value);
}

static ZEND_FUNCTION(ferry_fio_usleep)
{
	zend_long micro;
	if (ferry_fio_may_suspend() && ZEND_NUM_ARGS() == 1 && Z_TYPE_P(ZEND_CALL_ARG(execute_data, 1)) == IS_LONG
		&& (micro = Z_LVAL_P(ZEND_CALL_ARG(execute_data, 1))) >= 0 && fio_sleep((double) micro / 1e6)) {
		return;
	}
	fio_orig_usleep(execute_data, return_value);
}

/* fclose() of a stream another Fiber waits in (ferry_fiberio_ops.c); any other goes to PHP's. */
static ZEND_FUNCTION(ferry_fio_fclose)
{
	zval *arg = ZEND_NUM_ARGS() == 1 ? ZEND_CALL_ARG(execute_data, 1) : NULL;
	php_stream *stream;
	if (arg && Z_TYPE_P(arg) == IS_RESOURCE
		&& (stream = zend_fetch_resource2(Z_RES_P(arg), NULL, php_file_le_stream(), php_file_le_pstream())) != NULL
		&& ferry_fio_close_waited(stream)) {
		RETURN_TRUE;
	}
	fio_orig_fclose(execute_data, return_value);
}

/* Anything but a plain int argument (coercion, errors) goes to PHP's own function. */
static void fio_swap_handler(const char *name, zif_handler *saved, zif_handler hook, bool install)
{
	zend_function *f = zend_hash_str_find_ptr(CG(function_table), name, strlen(name));
	if (!f || f->type != ZEND_INTERNAL_FUNCTION) {
		return;
	}
	if (install && *saved == NULL) {
		*saved = f->internal_function.handler;
		f->internal_function.handler = hook;
	} else if (!install && *saved != NULL) {
		f->internal_function.handler = *saved;
		*saved = NULL;
	}
}

static void fio_off(void)
{
	if (!fio_on) {
		return;
	}
	fio_on = false;
	fio_swap_handler("sleep", &fio_orig_sleep, zif_ferry_fio_sleep, false);
	fio_swap_handler("usleep", &fio_orig_usleep, zif_ferry_fio_usleep, false);
	fio_swap_handler("fclose", &fio_orig_fclose, zif_ferry_fio_fclose, false);
	ferry_fio_transports_restore();
	ferry_fio_free_closed_all(false);
	ferry_fio_tls_restore();
	zval_ptr_dtor(&fio_await_cb);
	zval_ptr_dtor(&fio_sleep_cb);
	ZVAL_UNDEF(&fio_await_cb);
	ZVAL_UNDEF(&fio_sleep_cb);
}

void ferry_fiberio_rshutdown(void)
{
	fio_off();
	ferry_fio_free_closed_all(true);
	ferry_fio_owner_shutdown();
}

bool ferry_fio_enabled(void)
{
	return fio_on;
}

ZEND_FUNCTION(ferry_fiber_io_enable)
{
	zval *await, *sleep;
	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_OBJECT_OF_CLASS(await, zend_ce_closure)
		Z_PARAM_OBJECT_OF_CLASS(sleep, zend_ce_closure)
	ZEND_PARSE_PARAMETERS_END();
	fio_off();
	ZVAL_COPY(&fio_await_cb, await);
	ZVAL_COPY(&fio_sleep_cb, sleep);
	fio_swap_handler("sleep", &fio_orig_sleep, zif_ferry_fio_sleep, true);
	fio_swap_handler("usleep", &fio_orig_usleep, zif_ferry_fio_usleep, true);
	fio_swap_handler("fclose", &fio_orig_fclose, zif_ferry_fio_fclose, true);
	ferry_fio_transports_install();
	ferry_fio_tls_install();
	fio_on = true;
}

ZEND_FUNCTION(ferry_fiber_io_disable)
{
	ZEND_PARSE_PARAMETERS_NONE();
	fio_off();
}
