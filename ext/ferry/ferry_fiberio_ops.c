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
	bool tcp; /* made by the tcp factory: its names are host:port, a unix one's are paths */
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

static bool fio_is_tcp(const php_stream_ops *ops)
{
	for (int i = 0; i < fio_count; i++) {
		if (&fio_table[i].hooked == ops) {
			return fio_table[i].tcp;
		}
	}
	return false;
}

static bool fio_ready(php_socket_t fd, short events)
{
	struct pollfd p = {.fd = fd, .events = events};
	return poll(&p, 1, 0) > 0;
}

/*
 * The streams a Fiber is suspended in, each with its fio_waiter (on the waiting Fiber's C
 * stack). Another Fiber can only run while the first waits, so a stream in here touched
 * again means two requests share a connection: their bytes would interleave, so the
 * newcomer's operation fails instead.
 */
typedef struct {
	bool closed;        /* fclose()d by another Fiber meanwhile (ferry_fio_close_waited) */
	zend_fiber *fiber;  /* the waiter */
} fio_waiter;

static HashTable fio_waiting;
static bool fio_waiting_init;

/*
 * Streams fclose()d while a Fiber waited in them: their resource is closed, but the struct
 * lives on (in_free held up, so PHP's own free is a no-op) until the waiter's caller, which
 * still reads the stream after the hook returns, is done with it. Keyed by the stream; the
 * value is FIO_INSIDE while the waiter is still suspended in it, then the waiter's Fiber,
 * which may still be on its way out of the operation when it runs.
 */
static HashTable fio_closed;
static bool fio_closed_init;
#define FIO_INSIDE ((zend_fiber *) &fio_closed)

static void fio_tables_init(void)
{
	if (!fio_waiting_init) {
		zend_hash_init(&fio_waiting, 8, NULL, NULL, 1);
		fio_waiting_init = true;
	}
	if (!fio_closed_init) {
		zend_hash_init(&fio_closed, 8, NULL, NULL, 1);
		fio_closed_init = true;
	}
}

/* Frees the closed streams their waiter has left, but the running Fiber's (unless all). */
static void fio_free_closed(bool all)
{
	if (!fio_closed_init) {
		return;
	}
	zend_ulong key;
	zend_fiber *waiter;
	bool again = true;
	while (again && zend_hash_num_elements(&fio_closed) > 0) {
		again = false;
		ZEND_HASH_FOREACH_NUM_KEY_PTR(&fio_closed, key, waiter) {
			if (waiter != FIO_INSIDE && (all || waiter != EG(active_fiber))) {
				php_stream *stream = (php_stream *) (uintptr_t) key;
				zend_hash_index_del(&fio_closed, key);
				stream->in_free--;
				php_stream_free(stream, PHP_STREAM_FREE_CLOSE | PHP_STREAM_FREE_RSRC_DTOR);
				again = true; /* the free may have changed the table: walk it afresh */
				break;
			}
		} ZEND_HASH_FOREACH_END();
	}
}

bool fio_in_use(php_stream *stream)
{
	if (fio_closed_init && zend_hash_num_elements(&fio_closed) > 0
		&& zend_hash_index_exists(&fio_closed, (zend_ulong) (uintptr_t) stream)) {
		php_error_docref(NULL, E_WARNING, "the stream was closed by another Fiber while this one waited in it (pool.fiber_io)");
		return true;
	}
	fio_free_closed(false);
	if (!fio_waiting_init || zend_hash_num_elements(&fio_waiting) == 0
		|| !zend_hash_index_exists(&fio_waiting, (zend_ulong) (uintptr_t) stream)) {
		return false;
	}
	php_error_docref(NULL, E_WARNING, "another Fiber is waiting in this stream (pool.fiber_io): a connection serves one request at a time");
	return true;
}

/*
 * fclose() of a stream a Fiber waits in. PHP would free the stream now, and the waiter
 * would resume into freed memory (its caller, fgets() or mysqlnd, reads the stream after
 * the hook returns). So the close happens in two halves: now what the app sees (the
 * resource is invalid for everyone, the socket is shut down, so the peer sees the end and
 * the waiter's watch wakes at once), later the free (fio_free_closed).
 */
bool ferry_fio_close_waited(php_stream *stream)
{
	fio_waiter *w;
	if (!fio_waiting_init || zend_hash_num_elements(&fio_waiting) == 0 || !stream->res || stream->in_free
		|| !(w = zend_hash_index_find_ptr(&fio_waiting, (zend_ulong) (uintptr_t) stream))) {
		return false;
	}
	php_netstream_data_t *sock = stream->abstract;
	w->closed = true;
	if (sock && sock->socket != -1) {
		shutdown(sock->socket, SHUT_RDWR);
	}
	stream->in_free++;
	zend_list_close(stream->res);
	stream->res = NULL;
	zend_hash_index_update_ptr(&fio_closed, (zend_ulong) (uintptr_t) stream, FIO_INSIDE);
	return true;
}

ferry_fio_wait fio_await_in(php_stream *stream, php_socket_t fd, bool write, const struct timeval *timeout)
{
	fio_tables_init();
	fio_waiter w = {.closed = false, .fiber = EG(active_fiber)};
	zend_hash_index_update_ptr(&fio_waiting, (zend_ulong) (uintptr_t) stream, &w);
	ferry_fio_wait r = ferry_fio_await(fd, write, timeout);
	zend_hash_index_del(&fio_waiting, (zend_ulong) (uintptr_t) stream);
	if (w.closed) {
		zval *left = zend_hash_index_find(&fio_closed, (zend_ulong) (uintptr_t) stream);
		if (left) {
			Z_PTR_P(left) = w.fiber;
		}
		if (!EG(exception)) {
			php_error_docref(NULL, E_WARNING, "the stream was closed by another Fiber while this one waited in it (pool.fiber_io)");
		}
		return FERRY_FIO_FAILED;
	}
	return r;
}

/*
 * An exception ended the wait (the server cancelled the job): the protocol on this
 * connection stopped mid-exchange, so it is shut down, and whoever holds it next (a shared or
 * persistent handle, the next request) gets an error instead of the rest of this answer.
 */
void fio_abandon(php_stream *stream, php_netstream_data_t *sock)
{
	shutdown(sock->socket, SHUT_RDWR);
	stream->eof = 1;
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
	if (fio_in_use(stream) || !ferry_fio_owner_check(stream)) {
		return -1;
	}
	if (fio_wants_wait(stream, sock, POLLIN)) {
		switch (fio_await_in(stream, sock->socket, false, fio_timeout(sock))) {
		case FERRY_FIO_FAILED:
			fio_abandon(stream, sock);
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
	if (fio_in_use(stream) || !ferry_fio_owner_check(stream)) {
		return -1;
	}
	if (fio_wants_wait(stream, sock, POLLOUT)) {
		switch (fio_await_in(stream, sock->socket, true, fio_timeout(sock))) {
		case FERRY_FIO_FAILED:
			fio_abandon(stream, sock);
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

/*
 * PHP's socket code tells tcp from unix (connect, bind, accept) by comparing stream->ops
 * with its own tables, so its set_option runs with them in place for the call.
 */
int ferry_fio_orig_set_option(php_stream *stream, const php_stream_ops *orig, int option, int value, void *ptrparam)
{
	const php_stream_ops *hooked = stream->ops;
	stream->ops = orig;
	int r = orig->set_option(stream, option, value, ptrparam);
	stream->ops = hooked;
	return r;
}

/*
 * A blocking connect becomes PHP's asynchronous one (same socket options, bind, context),
 * after a name lookup off the loop, then the Fiber waits for the fd to be writable
 * (ferry_fiberio_connect.c).
 */
static int fio_set_option(php_stream *stream, int option, int value, void *ptrparam)
{
	const php_stream_ops *orig = fio_original(stream->ops);
	php_netstream_data_t *sock = stream->abstract;
	php_stream_xport_param *x = ptrparam;
	if (option == PHP_STREAM_OPTION_CRYPTO_API) {
		/* ext/openssl makes tcp:// streams able to turn TLS on (stream_socket_enable_crypto(),
		 * mysqlnd's SSL): OpenSSL then holds decrypted bytes the fd does not show, so the
		 * stream moves to the TLS hooks (ferry_fiberio_tls.c) or back to PHP's ops. */
		return ferry_fio_tls_crypto(stream, orig, option, value, ptrparam);
	}
	if (option != PHP_STREAM_OPTION_XPORT_API || !x || x->op != STREAM_XPORT_OP_CONNECT || !sock
		|| !sock->is_blocked || !ferry_fio_may_suspend()) {
		return ferry_fio_orig_set_option(stream, orig, option, value, ptrparam);
	}
	int r = ferry_fio_connect(stream, orig, x, fio_is_tcp(stream->ops));
	return r == -2 ? ferry_fio_orig_set_option(stream, orig, option, value, ptrparam) : r;
}

static int fio_close(php_stream *stream, int close_handle)
{
	ferry_fio_owner_forget(stream);
	return fio_original(stream->ops)->close(stream, close_handle);
}

static const php_stream_ops *fio_hooked(const php_stream_ops *orig, bool tcp)
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
	e->tcp = tcp;
	e->hooked = *orig;
	e->hooked.read = fio_read;
	e->hooked.write = fio_write;
	e->hooked.set_option = fio_set_option;
	e->hooked.close = fio_close;
	return &e->hooked;
}

static php_stream *fio_factory(const char *proto, size_t protolen, const char *resourcename, size_t resourcenamelen,
	const char *persistent_id, int options, int flags, struct timeval *timeout, php_stream_context *context STREAMS_DC)
{
	bool tcp = protolen == 3 && memcmp(proto, "tcp", 3) == 0;
	php_stream_transport_factory orig = tcp ? fio_orig_tcp : fio_orig_unix;
	php_stream *stream = orig(proto, protolen, resourcename, resourcenamelen, persistent_id, options, flags, timeout,
		context STREAMS_REL_CC);
	/* Persistent streams outlive the request whose Fiber would wait: left alone. */
	if (stream && !persistent_id && fio_original(stream->ops) == NULL) {
		const php_stream_ops *hooked = fio_hooked(stream->ops, tcp);
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

/* The hooks turned off, or the end of the request (end): every closed stream its waiter
 * left; at the end, one still inside is the allocator's to reclaim (nobody resumes it). */
void ferry_fio_free_closed_all(bool end)
{
	fio_free_closed(true);
	if (end && fio_closed_init) {
		zend_hash_clean(&fio_closed);
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
