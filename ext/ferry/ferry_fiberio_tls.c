/*
 * pool.fiber_io over TLS: the operations of ext/openssl's streams (ssl://, tls://, and a
 * tcp:// stream once stream_socket_enable_crypto() turns TLS on) whose read, write,
 * handshake and connect wait on Ferry's loop. Which streams get them: ferry_fiberio_tls_xport.c.
 *
 * OpenSSL holds decrypted bytes the fd does not show, and a readable fd may carry only
 * records that are not data (TLS 1.3 session tickets), so "wait for the fd, then PHP's op"
 * (the tcp hook) could sleep past buffered data or block in PHP's own poll after the wait.
 * Instead PHP's op runs with the stream marked non-blocking, which makes ext/openssl try
 * once and return (xp_ssl.c: "don't loop indefinitely in non-blocking mode"); when it got
 * nothing because OpenSSL wants the socket, the Fiber waits on the loop for the direction
 * OpenSSL asked (SSL_want_read/SSL_want_write) and tries again. What reaches the app
 * (bytes, eof, warnings) is still PHP's; only the waits between tries moved to the loop.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "main/php_network.h"
#include "ferry_fiberio_tls.h"

#ifdef FERRY_FIO_TLS

#include <errno.h>
#include <time.h>

static bool tls_usable(fio_tls_data *d)
{
	return d->s.socket != -1 && d->s.is_blocked && ferry_fio_may_suspend();
}

static double tls_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* An absolute deadline for a relative PHP timeout; 0 when there is none. */
static double tls_deadline(const struct timeval *t)
{
	if (t->tv_sec < 0 || (t->tv_sec == 0 && t->tv_usec == 0)) {
		return 0;
	}
	return tls_now() + (double) t->tv_sec + (double) t->tv_usec / 1e6;
}

/* What is left until deadline, in *left; false once it passed. */
static bool tls_left(double deadline, struct timeval *left)
{
	if (deadline == 0) {
		return true;
	}
	double rest = deadline - tls_now();
	if (rest <= 0) {
		return false;
	}
	left->tv_sec = (time_t) rest;
	left->tv_usec = (suseconds_t) ((rest - (double) left->tv_sec) * 1e6);
	return true;
}

/* PHP's op, with the stream non-blocking for the call: one try, no poll of its own. */
static void tls_nonblocking(fio_tls_data *d, bool on)
{
	php_set_sock_blocking(d->s.socket, on ? 0 : 1);
	d->s.is_blocked = on ? 0 : 1;
}

/* After a try that moved nothing: whether OpenSSL waits for the socket (and which way). */
static bool tls_would_block(php_stream *stream, fio_tls_data *d, int err, bool *write)
{
	if (stream->eof || err != EAGAIN || !d->ssl_handle) {
		return false;
	}
	*write = SSL_want_write(d->ssl_handle);
	return *write || SSL_want_read(d->ssl_handle);
}

/*
 * The wait between two tries, in the direction OpenSSL asked, until deadline (0: none). A
 * wait an exception ended (the job cancelled) leaves the connection shut down.
 */
static ferry_fio_wait tls_wait(php_stream *stream, fio_tls_data *d, double deadline, bool write)
{
	struct timeval left;
	if (!tls_left(deadline, &left)) {
		return FERRY_FIO_TIMEOUT;
	}
	ferry_fio_wait w = fio_await_in(stream, d->s.socket, write, deadline == 0 ? NULL : &left);
	if (w == FERRY_FIO_FAILED) {
		fio_abandon(stream, &d->s);
	}
	return w;
}

static ssize_t tls_io(php_stream *stream, fio_tls_data *d, const php_stream_ops *orig, bool read, char *buf, size_t count)
{
	double deadline = d->s.timeout.tv_sec == -1 ? 0 : tls_deadline(&d->s.timeout);
	bool once = false;
#if PHP_VERSION_ID >= 80400
	/* PHP 8.4 returns what it already holds rather than wait for more. */
	once = read && stream->has_buffered_data;
#endif
	for (;;) {
		tls_nonblocking(d, true);
		errno = 0;
		ssize_t n = read ? orig->read(stream, buf, count) : orig->write(stream, buf, count);
		int err = errno;
		tls_nonblocking(d, false);
		bool write = false;
		if (n != 0 || once || !tls_would_block(stream, d, err, &write)) {
			return n;
		}
		switch (tls_wait(stream, d, deadline, write)) {
		case FERRY_FIO_READY:
			continue;
		case FERRY_FIO_TIMEOUT:
			/* What ext/openssl's own loop does when the stream's timeout passes. */
			d->s.timeout_event = 1;
			return -1;
		case FERRY_FIO_FAILED:
			return -1;
		case FERRY_FIO_BLOCK:
			return read ? orig->read(stream, buf, count) : orig->write(stream, buf, count);
		}
	}
}

/* The owner table must not outlive the stream (ferry_fiberio_owner.c). */
int ferry_fio_tls_close(php_stream *stream, int close_handle)
{
	ferry_fio_owner_forget(stream);
	return ferry_fio_tls_original(stream->ops)->close(stream, close_handle);
}

ssize_t ferry_fio_tls_read(php_stream *stream, char *buf, size_t count)
{
	const php_stream_ops *orig = ferry_fio_tls_original(stream->ops);
	fio_tls_data *d = stream->abstract;
	if (fio_in_use(stream) || !ferry_fio_owner_check(stream)) {
		return -1;
	}
	if (!d->ssl_active || !tls_usable(d)) {
		return orig->read(stream, buf, count);
	}
	return tls_io(stream, d, orig, true, buf, count);
}

ssize_t ferry_fio_tls_write(php_stream *stream, const char *buf, size_t count)
{
	const php_stream_ops *orig = ferry_fio_tls_original(stream->ops);
	fio_tls_data *d = stream->abstract;
	if (fio_in_use(stream) || !ferry_fio_owner_check(stream)) {
		return -1;
	}
	if (!d->ssl_active || !tls_usable(d)) {
		return orig->write(stream, buf, count);
	}
	return tls_io(stream, d, orig, false, (char *) buf, count);
}

/*
 * stream_socket_enable_crypto() on a blocking stream: ext/openssl's handshake loops on its
 * own poll, so it is driven a step at a time instead (the non-blocking form returns 0 while
 * the handshake goes on), the Fiber waiting on the loop between steps. The deadline is the
 * one PHP's loop keeps: the connect timeout for a client, the stream's for a server.
 */
static int tls_handshake(php_stream *stream, fio_tls_data *d, const php_stream_ops *orig, int option, int value,
	php_stream_xport_crypto_param *c)
{
	double deadline = tls_deadline(d->is_client ? &d->connect_timeout : &d->s.timeout);
	int r;
	for (;;) {
		tls_nonblocking(d, true);
		errno = 0;
		r = orig->set_option(stream, option, value, c);
		int err = errno;
		tls_nonblocking(d, false);
		bool write = false;
		if (r != PHP_STREAM_OPTION_RETURN_OK || c->outputs.returncode != 0) {
			return r;
		}
		if (!tls_would_block(stream, d, err, &write)) {
			/* Unfinished with nothing to wait for: PHP's own loop decides. */
			return orig->set_option(stream, option, value, c);
		}
		switch (tls_wait(stream, d, deadline, write)) {
		case FERRY_FIO_READY:
			continue;
		case FERRY_FIO_TIMEOUT:
			php_error_docref(NULL, E_WARNING, "SSL: Handshake timed out");
			c->outputs.returncode = -1;
			return r;
		case FERRY_FIO_FAILED:
			c->outputs.returncode = -1;
			return r;
		case FERRY_FIO_BLOCK:
			return orig->set_option(stream, option, value, c);
		}
	}
}

static int tls_crypto(php_stream *stream, fio_tls_data *d, const php_stream_ops *orig, int option, int value, void *ptrparam)
{
	php_stream_xport_crypto_param *c = ptrparam;
	if (c && c->op == STREAM_XPORT_CRYPTO_OP_ENABLE && c->inputs.activate && !d->ssl_active && d->ssl_handle
		&& SSL_get_fd(d->ssl_handle) == d->s.socket && tls_usable(d)) {
		return tls_handshake(stream, d, orig, option, value, c);
	}
	/* ext/openssl knows a session stream to resume from by its ops table: PHP's, for the call. */
	php_stream *session = c && c->op == STREAM_XPORT_CRYPTO_OP_SETUP ? c->inputs.session : NULL;
	const php_stream_ops *session_hooked = session ? session->ops : NULL;
	const php_stream_ops *session_orig = session ? ferry_fio_tls_original(session->ops) : NULL;
	if (session_orig) {
		session->ops = session_orig;
	}
	int r = orig->set_option(stream, option, value, ptrparam);
	if (session_orig) {
		session->ops = session_hooked;
	}
	if (c && c->op == STREAM_XPORT_CRYPTO_OP_ENABLE && !c->inputs.activate) {
		/* TLS turned off again (rare): the stream goes back to PHP's ops, blocking. */
		stream->ops = orig;
	}
	return r;
}

/*
 * ssl:// and tls:// connect: ext/openssl connects and then handshakes, both blocking. The
 * connect becomes the tcp hook's (the name resolved off the loop, each address tried, each
 * asynchronous connect settled on the loop) with the handshake held back
 * (enable_on_connect), and the handshake then runs through this stream's ops
 * (tls_handshake) as xp_ssl.c would have run it.
 */
static int tls_connect(php_stream *stream, fio_tls_data *d, const php_stream_ops *orig, int option, int value,
	php_stream_xport_param *x)
{
	int on_connect = d->enable_on_connect;
	d->enable_on_connect = 0;
	int r = ferry_fio_connect(stream, orig, x, true);
	d->enable_on_connect = on_connect;
	if (r == -2) {
		/* Not on the loop after all: PHP's own connect and handshake, blocking. */
		const php_stream_ops *hooked = stream->ops;
		stream->ops = orig;
		r = orig->set_option(stream, option, value, x);
		stream->ops = hooked;
		return r;
	}
	if (r != PHP_STREAM_OPTION_RETURN_OK || x->outputs.returncode == -1 || d->s.socket == -1) {
		return r;
	}
	if (x->outputs.returncode == 0 && on_connect
		&& (php_stream_xport_crypto_setup(stream, d->method, NULL) < 0 || php_stream_xport_crypto_enable(stream, 1) < 0)) {
		php_error_docref(NULL, E_WARNING, "Failed to enable crypto");
		x->outputs.returncode = -1;
	}
	return r;
}

int ferry_fio_tls_set_option(php_stream *stream, int option, int value, void *ptrparam)
{
	const php_stream_ops *orig = ferry_fio_tls_original(stream->ops);
	fio_tls_data *d = stream->abstract;
	php_stream_xport_param *x = ptrparam;
	if (option == PHP_STREAM_OPTION_CRYPTO_API) {
		return tls_crypto(stream, d, orig, option, value, ptrparam);
	}
	if (option == PHP_STREAM_OPTION_XPORT_API && x && x->op == STREAM_XPORT_OP_CONNECT && tls_usable(d)) {
		return tls_connect(stream, d, orig, option, value, x);
	}
	return orig->set_option(stream, option, value, ptrparam);
}

#endif
