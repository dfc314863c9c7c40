/*
 * Fiber-aware I/O (issue 35, pool.fiber_io): PHP's tcp and unix socket streams and
 * sleep()/usleep() suspend only the running Fiber when Ferry's loop runs it. The C side
 * only knows "wait for this fd" and "sleep this long"; php/worker's FiberIo decides whether
 * the Fiber is one its loop may suspend and does the waiting (Loop::awaitReadable()...).
 */
#ifndef FERRY_FIBERIO_H
#define FERRY_FIBERIO_H

#include "php.h"
#include "main/php_streams.h"
#include "main/php_network.h"
#include "zend_fibers.h"

typedef enum {
	FERRY_FIO_BLOCK = 0,  /* not here: do what PHP does without the hooks */
	FERRY_FIO_READY,      /* the loop saw the fd ready */
	FERRY_FIO_TIMEOUT,    /* the wait's timeout passed first */
	FERRY_FIO_FAILED,     /* an exception is pending (the Fiber was thrown into), or the
	                       * stream was closed meanwhile (a warning said so): fail the op */
} ferry_fio_wait;

/* Whether a switch could happen at all: hooks on, inside a Fiber, switching allowed. */
bool ferry_fio_may_suspend(void);
/* Waits for fd to be readable (or writable) for at most *timeout (NULL: no limit). */
ferry_fio_wait ferry_fio_await(php_socket_t fd, bool write, const struct timeval *timeout);

/* ferry_fiberio_ops.c: the transport wrappers. */
void ferry_fio_transports_install(void);
void ferry_fio_transports_restore(void);
/* PHP's own set_option, with PHP's ops in place for the call (its code compares them). */
int ferry_fio_orig_set_option(php_stream *stream, const php_stream_ops *orig, int option, int value, void *ptrparam);
/* ferry_fiberio_connect.c: a hooked blocking connect; -2: leave it to PHP's own. */
int ferry_fio_connect(php_stream *stream, const php_stream_ops *orig, php_stream_xport_param *x, bool by_name);
/* fclose() of a stream a Fiber waits in: closed now, freed once the waiter left it. */
bool ferry_fio_close_waited(php_stream *stream);
void ferry_fio_free_closed_all(bool end);
/* Shared with ferry_fiberio_tls.c: the two-Fibers guard, the wait that
 * registers the stream, the shutdown after a cancelled wait. */
bool fio_in_use(php_stream *stream);
ferry_fio_wait fio_await_in(php_stream *stream, php_socket_t fd, bool write, const struct timeval *timeout);
void fio_abandon(php_stream *stream, php_netstream_data_t *sock);

/* ferry_fiberio_tls.c: ext/openssl's ssl/tls transports, and a tcp stream turning TLS on. */
void ferry_fio_tls_install(void);
void ferry_fio_tls_restore(void);
int ferry_fio_tls_crypto(php_stream *stream, const php_stream_ops *orig, int option, int value, void *ptrparam);

void ferry_fiberio_rshutdown(void);

/* Whether fiber_io_enable() is in force. */
bool ferry_fio_enabled(void);

/* ferry_fiberio_owner.c: one request per connection at a time. */
void ferry_fio_turn(zend_fiber *fiber);
/* false (and a warning) when another job, still running, owns stream; else it is ours now */
bool ferry_fio_owner_check(php_stream *stream);
void ferry_fio_owner_forget(php_stream *stream);
void ferry_fio_owner_shutdown(void);

#endif
