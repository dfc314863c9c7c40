/*
 * pool.fiber_io over TLS: which streams get the TLS operations (ferry_fiberio_tls.c).
 * ext/openssl's ssl, tls and tlsv1.x transport factories are wrapped, and a tcp stream
 * (ferry_fiberio_ops.c's) moves here when stream_socket_enable_crypto() turns TLS on.
 *
 * The SSL handle and the flags live in ext/openssl's private php_openssl_netstream_data_t;
 * its head is mirrored (ferry_fiberio_tls.h) for the PHP versions whose layout was checked
 * (8.1 to 8.4), and a stream is taken only when its ops say "tcp_socket/ssl", ext/openssl
 * is loaded, and the mirrored fields look like what xp_ssl.c keeps there. Anything else
 * keeps PHP's ops, as without libssl at build time.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "main/php_network.h"
#include "ferry_fiberio_tls.h"

#ifdef FERRY_FIO_TLS

typedef struct {
	const php_stream_ops *orig;
	php_stream_ops hooked;
} fio_tls_ops;

/* Lives as long as the process: a stream keeps its ops after the hooks are turned off. */
#define FIO_TLS_MAX_OPS 4
static fio_tls_ops tls_table[FIO_TLS_MAX_OPS];
static int tls_count;

/* ext/openssl's transports besides tcp (which ferry_fiberio_ops.c wraps). */
static const char *const tls_names[] = {"ssl", "tls", "tlsv1.0", "tlsv1.1", "tlsv1.2", "tlsv1.3", "sslv3"};
#define FIO_TLS_NAMES (sizeof(tls_names) / sizeof(tls_names[0]))
static php_stream_transport_factory tls_factories[FIO_TLS_NAMES];

const php_stream_ops *ferry_fio_tls_original(const php_stream_ops *ops)
{
	for (int i = 0; i < tls_count; i++) {
		if (&tls_table[i].hooked == ops) {
			return tls_table[i].orig;
		}
	}
	return NULL;
}

static bool tls_flag(int v)
{
	return v == 0 || v == 1;
}

/* Whether stream (with PHP's ops orig) is one of ext/openssl's, as far as can be told. */
static fio_tls_data *tls_data(php_stream *stream, const php_stream_ops *orig)
{
	if (!orig || !orig->label || strcmp(orig->label, "tcp_socket/ssl") != 0 || !stream->abstract
		|| !zend_hash_str_exists(&module_registry, "openssl", sizeof("openssl") - 1)) {
		return NULL;
	}
	fio_tls_data *d = stream->abstract;
	if (!tls_flag(d->enable_on_connect) || !tls_flag(d->is_client) || !tls_flag(d->ssl_active)
		|| !tls_flag(d->s.is_blocked) || (d->ssl_handle && SSL_get_fd(d->ssl_handle) != d->s.socket)) {
		return NULL;
	}
	return d;
}


static const php_stream_ops *tls_hooked(const php_stream_ops *orig)
{
	for (int i = 0; i < tls_count; i++) {
		if (tls_table[i].orig == orig) {
			return &tls_table[i].hooked;
		}
	}
	if (tls_count == FIO_TLS_MAX_OPS || !orig->set_option || !orig->read || !orig->write) {
		return NULL;
	}
	fio_tls_ops *e = &tls_table[tls_count++];
	e->orig = orig;
	e->hooked = *orig;
	e->hooked.read = ferry_fio_tls_read;
	e->hooked.write = ferry_fio_tls_write;
	e->hooked.set_option = ferry_fio_tls_set_option;
	e->hooked.close = ferry_fio_tls_close;
	return &e->hooked;
}

/* Gives stream (whose PHP ops are orig) the TLS hooks; false when it is not ext/openssl's. */
static bool tls_adopt(php_stream *stream, const php_stream_ops *orig)
{
	const php_stream_ops *hooked;
	if (!tls_data(stream, orig) || !(hooked = tls_hooked(orig))) {
		return false;
	}
	stream->ops = hooked;
	return true;
}

int ferry_fio_tls_crypto(php_stream *stream, const php_stream_ops *orig, int option, int value, void *ptrparam)
{
	if (tls_adopt(stream, orig)) {
		return ferry_fio_tls_set_option(stream, option, value, ptrparam);
	}
	stream->ops = orig;
	return orig->set_option(stream, option, value, ptrparam);
}

static php_stream *tls_factory(const char *proto, size_t protolen, const char *resourcename, size_t resourcenamelen,
	const char *persistent_id, int options, int flags, struct timeval *timeout, php_stream_context *context STREAMS_DC)
{
	php_stream_transport_factory orig = NULL;
	for (size_t i = 0; i < FIO_TLS_NAMES; i++) {
		if (strlen(tls_names[i]) == protolen && strncasecmp(tls_names[i], proto, protolen) == 0) {
			orig = tls_factories[i];
		}
	}
	if (!orig) {
		return NULL;
	}
	php_stream *stream = orig(proto, protolen, resourcename, resourcenamelen, persistent_id, options, flags, timeout,
		context STREAMS_REL_CC);
	/* Persistent streams outlive the request whose Fiber would wait: left alone. */
	if (stream && !persistent_id && ferry_fio_tls_original(stream->ops) == NULL) {
		tls_adopt(stream, stream->ops);
	}
	return stream;
}

static void tls_swap(bool install)
{
	for (size_t i = 0; i < FIO_TLS_NAMES; i++) {
		zval *zv = zend_hash_str_find(php_stream_xport_get_hash(), tls_names[i], strlen(tls_names[i]));
		if (!zv) {
			continue;
		}
		if (install && tls_factories[i] == NULL) {
			tls_factories[i] = Z_PTR_P(zv);
			Z_PTR_P(zv) = tls_factory;
		} else if (!install && tls_factories[i] != NULL) {
			Z_PTR_P(zv) = tls_factories[i];
			tls_factories[i] = NULL;
		}
	}
}

void ferry_fio_tls_install(void)
{
	tls_swap(true);
}

void ferry_fio_tls_restore(void)
{
	tls_swap(false);
}

#else /* no libssl to build against, or a PHP whose xp_ssl.c layout was not checked */

int ferry_fio_tls_crypto(php_stream *stream, const php_stream_ops *orig, int option, int value, void *ptrparam)
{
	stream->ops = orig;
	return orig->set_option(stream, option, value, ptrparam);
}

void ferry_fio_tls_install(void)
{
}

void ferry_fio_tls_restore(void)
{
}

#endif
