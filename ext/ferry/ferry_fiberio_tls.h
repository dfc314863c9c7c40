/*
 * pool.fiber_io over TLS, shared by ferry_fiberio_tls.c (the hooked operations) and
 * ferry_fiberio_tls_xport.c (which streams get them: the transports, the checks).
 */
#ifndef FERRY_FIBERIO_TLS_H
#define FERRY_FIBERIO_TLS_H

#include "ferry_fiberio.h"

#if defined(HAVE_FERRY_OPENSSL) && PHP_VERSION_ID >= 80100 && PHP_VERSION_ID < 80500
# define FERRY_FIO_TLS 1
#endif

#ifdef FERRY_FIO_TLS
#include <openssl/ssl.h>

/* The head of ext/openssl's php_openssl_netstream_data_t (xp_ssl.c, PHP 8.1-8.4). */
typedef struct {
	php_netstream_data_t s;
	SSL *ssl_handle;
	SSL_CTX *ctx;
	struct timeval connect_timeout;
	int enable_on_connect;
	int is_client;
	int ssl_active;
	php_stream_xport_crypt_method_t method;
} fio_tls_data;


/* PHP's ops behind a TLS stream's hooked copy; NULL for any other ops. */
const php_stream_ops *ferry_fio_tls_original(const php_stream_ops *ops);
ssize_t ferry_fio_tls_read(php_stream *stream, char *buf, size_t count);
ssize_t ferry_fio_tls_write(php_stream *stream, const char *buf, size_t count);
int ferry_fio_tls_set_option(php_stream *stream, int option, int value, void *ptrparam);
int ferry_fio_tls_close(php_stream *stream, int close_handle);
#endif

#endif
