/*
 * pool.fiber_io's transports: "tcp" and "unix" streams made by PHP's own factory, with a
 * copy of their php_stream_ops whose read, write and connect wait on Ferry's loop.
 *
 * Each hook waits for the fd first (suspending the Fiber, ferry_fiberio.c) and then calls
 * PHP's own operation, which finds the fd ready and neither polls nor blocks; so what reaches
 * the app (short reads, eof, warnings, metadata) is PHP's. When a write's wait times out,
 * it fails as PHP's own write fails after its poll timed out (the notice, timed_out); a
 * read's timeout is marked as PHP's own read marks it. The copy
 * keeps PHP's label, so stream_get_meta_data() still says "tcp_socket/ssl".
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include "php.h"
#include "main/php_network.h"
#include "ferry_fiberio.h"

typedef struct {
	const php_stream_ops *orig;
	php_stream_ops hooked;
} fio_ops;

/* One per kind of socket stream seen (tcp, unix): they live as long as the process, since
 * a stream opened while the hooks were on keeps its ops after they are turned off. */
#define FIO_MAX_OPS 8
static fio_ops fio_table[FIO_MAX_OPS];
static int fio_count;

static php_stream_transport_factory fio_orig_tcp;
static php_stream_transport_factory fio_orig_unix;

static const php_stream_ops *fio_original(const php_stream_ops *ops)
{
	for (int i = 0; i < fio_count; i++) {
		if (&fio_table[i].hooked == ops) {
			return fio_table[i].orig;
		}
	}
	return NULL;
}

static bool fio_ready(php_socket_t fd, short events)
{
	struct pollfd p = {.fd = fd, .events = events};
	return poll(&p, 1, 0) > 0;
}

/*
 * The streams a Fiber is suspended in. Another Fiber can only run while the first waits,
 * so a stream in here touched again means two requests share a connection: their bytes
 * would interleave, so the newcomer's operation fails instead.
 */
static HashTable fio_waiting;
static bool fio_waiting_init;

static bool fio_in_use(php_stream *stream)
{
	if (!fio_waiting_init || zend_hash_num_elements(&fio_waiting) == 0
		|| !zend_hash_index_exists(&fio_waiting, (zend_ulong) (uintptr_t) stream)) {
		return false;
	}
	php_error_docref(NULL, E_WARNING, "another Fiber is waiting in this stream (pool.fiber_io): a connection serves one request at a time");
	return true;
}

static ferry_fio_wait fio_await_in(php_stream *stream, php_socket_t fd, bool write, const struct timeval *timeout)
{
	if (!fio_waiting_init) {
		zend_hash_init(&fio_waiting, 8, NULL, NULL, 1);
		fio_waiting_init = true;
	}
	zval marker;
	ZVAL_TRUE(&marker);
	zend_hash_index_update(&fio_waiting, (zend_ulong) (uintptr_t) stream, &marker);
	ferry_fio_wait w = ferry_fio_await(fd, write, timeout);
	zend_hash_index_del(&fio_waiting, (zend_ulong) (uintptr_t) stream);
	return w;
}

static const struct timeval *fio_timeout(php_netstream_data_t *sock)
{
	return sock->timeout.tv_sec == -1 ? NULL : &sock->timeout;
}

/* Whether this operation should wait on the loop before PHP's own runs. */
static bool fio_wants_wait(php_stream *stream, php_netstream_data_t *sock, short events)
{
#if PHP_VERSION_ID >= 80400
	/* PHP 8.4 returns what it already holds rather than wait for more. */
	if (events == POLLIN && stream->has_buffered_data) {
		return false;
	}
#endif
	return sock && sock->socket != -1 && sock->is_blocked && ferry_fio_may_suspend() && !fio_ready(sock->socket, events);
}

static ssize_t fio_read(php_stream *stream, char *buf, size_t count)
{
	const php_stream_ops *orig = fio_original(stream->ops);
	php_netstream_data_t *sock = stream->abstract;
	if (fio_in_use(stream)) {
		return -1;
	}
	if (fio_wants_wait(stream, sock, POLLIN)) {
		switch (fio_await_in(stream, sock->socket, false, fio_timeout(sock))) {
		case FERRY_FIO_FAILED:
			return -1;
		case FERRY_FIO_TIMEOUT:
			/* What PHP's read does when its own poll times out (8.4 no longer polls when
			 * the timeout is zero, so it cannot be asked to say it). */
			sock->timeout_event = 1;
#if PHP_VERSION_ID >= 80400
			stream->has_buffered_data = 0;
#endif
			return 0;
		default:
			break;
		}
	}
	return orig->read(stream, buf, count);
}

/*
 * What PHP's write does once its poll for writability timed out: it fails without another
 * send. Calling PHP's write here instead would send first, and a send can pass a few bytes
 * while the fd is still below the kernel's writability mark; the write then goes on with a
 * fresh wait of the whole timeout, as often as a slow reader lets a few bytes through.
 */
static void fio_write_timed_out(php_stream *stream, php_netstream_data_t *sock, size_t count)
{
	sock->timeout_event = 1;
	if (!(stream->flags & PHP_STREAM_FLAG_SUPPRESS_ERRORS)) {
		char *estr = php_socket_strerror(EAGAIN, NULL, 0);
		php_error_docref(NULL, E_NOTICE, "Send of " ZEND_LONG_FMT " bytes failed with errno=%d %s", (zend_long) count, EAGAIN, estr);
		efree(estr);
	}
}

static ssize_t fio_write(php_stream *stream, const char *buf, size_t count)
{
	const php_stream_ops *orig = fio_original(stream->ops);
	php_netstream_data_t *sock = stream->abstract;
	if (fio_in_use(stream)) {
		return -1;
	}
	if (fio_wants_wait(stream, sock, POLLOUT)) {
		switch (fio_await_in(stream, sock->socket, true, fio_timeout(sock))) {
		case FERRY_FIO_FAILED:
			return -1;
		case FERRY_FIO_TIMEOUT:
			fio_write_timed_out(stream, sock, count);
			return -1;
		default:
			break;
		}
	}
	return orig->write(stream, buf, count);
}

/* Ends a connect PHP began asynchronously as its blocking connect would have. */
static void fio_connect_settle(php_netstream_data_t *sock, php_stream_xport_param *x)
{
	int err = 0;
	if (!fio_ready(sock->socket, POLLOUT)) {
		switch (ferry_fio_await(sock->socket, true, x->inputs.timeout)) {
		case FERRY_FIO_READY:
			break;
		case FERRY_FIO_TIMEOUT:
			err = ETIMEDOUT;
			break;
		case FERRY_FIO_FAILED:
			err = ECANCELED;
			break;
		case FERRY_FIO_BLOCK:
			if (php_pollfd_for(sock->socket, POLLOUT, x->inputs.timeout) <= 0) {
				err = ETIMEDOUT;
			}
			break;
		}
	}
	if (err == 0) {
		socklen_t len = sizeof(err);
		if (getsockopt(sock->socket, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
			err = errno;
		}
	}
	if (x->outputs.error_text) {
		zend_string_release(x->outputs.error_text);
		x->outputs.error_text = NULL;
	}
	x->outputs.error_code = err;
	x->outputs.returncode = err ? -1 : 0;
	if (err && x->want_errortext) {
		x->outputs.error_text = php_socket_error_str(err);
	}
	php_set_sock_blocking(sock->socket, 1);
}

/*
 * PHP's socket code tells tcp from unix (connect, bind, accept) by comparing stream->ops
 * with its own tables, so its set_option runs with them in place for the call.
 */
static int fio_orig_set_option(php_stream *stream, const php_stream_ops *orig, int option, int value, void *ptrparam)
{
	const php_stream_ops *hooked = stream->ops;
	stream->ops = orig;
	int r = orig->set_option(stream, option, value, ptrparam);
	stream->ops = hooked;
	return r;
}

/*
 * A blocking connect becomes PHP's asynchronous one (same socket options, bind, context),
 * then the Fiber waits for the fd to be writable. The name lookup before it still blocks.
 */
static int fio_set_option(php_stream *stream, int option, int value, void *ptrparam)
{
	const php_stream_ops *orig = fio_original(stream->ops);
	php_netstream_data_t *sock = stream->abstract;
	php_stream_xport_param *x = ptrparam;
	if (option == PHP_STREAM_OPTION_CRYPTO_API) {
		/* ext/openssl makes tcp:// streams able to turn TLS on (stream_socket_enable_crypto(),
		 * mysqlnd's SSL): OpenSSL then holds decrypted bytes the fd does not show, and a
		 * wait for readability could outlast them. Such a stream goes back to PHP's ops. */
		stream->ops = orig;
		return orig->set_option(stream, option, value, ptrparam);
	}
	if (option != PHP_STREAM_OPTION_XPORT_API || !x || x->op != STREAM_XPORT_OP_CONNECT || !sock
		|| !sock->is_blocked || !ferry_fio_may_suspend()) {
		return fio_orig_set_option(stream, orig, option, value, ptrparam);
	}
	x->op = STREAM_XPORT_OP_CONNECT_ASYNC;
	int r = fio_orig_set_option(stream, orig, option, value, ptrparam);
	x->op = STREAM_XPORT_OP_CONNECT;
	if (r == PHP_STREAM_OPTION_RETURN_OK && x->outputs.returncode != -1 && sock->socket != -1) {
		fio_connect_settle(sock, x);
	}
	return r;
}

static const php_stream_ops *fio_hooked(const php_stream_ops *orig)
{
	for (int i = 0; i < fio_count; i++) {
		if (fio_table[i].orig == orig) {
			return &fio_table[i].hooked;
		}
	}
	if (fio_count == FIO_MAX_OPS || !orig->set_option) {
		return NULL;
	}
	fio_ops *e = &fio_table[fio_count++];
	e->orig = orig;
	e->hooked = *orig;
	e->hooked.read = fio_read;
	e->hooked.write = fio_write;
	e->hooked.set_option = fio_set_option;
	return &e->hooked;
}

static php_stream *fio_factory(const char *proto, size_t protolen, const char *resourcename, size_t resourcenamelen,
	const char *persistent_id, int options, int flags, struct timeval *timeout, php_stream_context *context STREAMS_DC)
{
	php_stream_transport_factory orig = protolen == 3 && memcmp(proto, "tcp", 3) == 0 ? fio_orig_tcp : fio_orig_unix;
	php_stream *stream = orig(proto, protolen, resourcename, resourcenamelen, persistent_id, options, flags, timeout,
		context STREAMS_REL_CC);
	/* Persistent streams outlive the request whose Fiber would wait: left alone. */
	if (stream && !persistent_id && fio_original(stream->ops) == NULL) {
		const php_stream_ops *hooked = fio_hooked(stream->ops);
		if (hooked) {
			stream->ops = hooked;
		}
	}
	return stream;
}

static void fio_swap(const char *name, php_stream_transport_factory *saved, bool install)
{
	zval *zv = zend_hash_str_find(php_stream_xport_get_hash(), name, strlen(name));
	if (!zv) {
		return;
	}
	if (install && *saved == NULL) {
		*saved = Z_PTR_P(zv);
		Z_PTR_P(zv) = fio_factory;
	} else if (!install && *saved != NULL) {
		Z_PTR_P(zv) = *saved;
		*saved = NULL;
	}
}

void ferry_fio_transports_install(void)
{
	fio_swap("tcp", &fio_orig_tcp, true);
	fio_swap("unix", &fio_orig_unix, true);
}

void ferry_fio_transports_restore(void)
{
	if (fio_waiting_init) {
		zend_hash_clean(&fio_waiting);
	}
	fio_swap("tcp", &fio_orig_tcp, false);
	fio_swap("unix", &fio_orig_unix, false);
}
