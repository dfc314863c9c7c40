dnl ext/ferry: Ferry's optional worker extension (see README.md).
PHP_ARG_ENABLE([ferry],
  [whether to enable the Ferry worker extension],
  [AS_HELP_STRING([--enable-ferry], [Enable the Ferry worker extension])],
  [no])

if test "$PHP_FERRY" != "no"; then
  AC_DEFINE(HAVE_FERRY, 1, [Whether the Ferry extension is enabled])
  PHP_NEW_EXTENSION(ferry, [ferry.c ferry_sapi.c ferry_output.c ferry_session.c ferry_uploads.c ferry_exit.c ferry_frame.c ferry_frame_php.c ferry_msgpack_read.c ferry_msgpack_dec.c ferry_msgpack_enc.c ferry_msgpack_php.c ferry_msgpack_ext.c ferry_msgpack_tnt.c ferry_msgpack_extenc.c ferry_msgpack_msg.c ferry_ser.c ferry_ser_php.c ferry_loop.c ferry_loop_job.c ferry_fiber.c ferry_fiber_init.c ferry_fiber_job.c ferry_fiber_answer.c ferry_fiberio.c ferry_fiberio_ops.c ferry_fiberio_owner.c ferry_fiberio_connect.c ferry_fiberio_tls.c ferry_fiberio_tls_xport.c ferry_job_common.c ferry_contract.c ferry_http.c ferry_http_fields.c ferry_http_grammar.c ferry_http_tables.c ferry_http_chunked.c ferry_http_php.c ferry_direct.c ferry_direct_conn.c ferry_direct_ctx.c ferry_direct_answer.c ferry_direct_json.c ferry_direct_log_fmt.c ferry_direct_log.c ferry_direct_ttl.c ferry_direct_fiber.c ferry_direct_fiber_answer.c ferry_forwarded.c ferry_forwarded_parse.c ferry_forwarded_addr.c ferry_forwarded_text.c ferry_forwarded_php.c ferry_multipart.c ferry_multipart_ct.c ferry_multipart_spool.c ferry_multipart_text.c ferry_multipart_print.c ferry_multipart_php.c], $ext_shared,, [-DZEND_ENABLE_STATIC_TSRMLS_CACHE=1 -Wall -Wextra -Wno-unused-parameter])
  PHP_ADD_EXTENSION_DEP(ferry, session)
  dnl pool.fiber_io's TLS hooks read OpenSSL's state (SSL_want, SSL_get_fd); without
  dnl libssl's headers they are left out and TLS streams keep PHP's blocking ops.
  PHP_SETUP_OPENSSL(FERRY_SHARED_LIBADD, [AC_DEFINE(HAVE_FERRY_OPENSSL, 1, [Whether libssl is there for the TLS hooks])], [AC_MSG_WARN([libssl not found: pool.fiber_io leaves TLS streams blocking])])
  PHP_SUBST(FERRY_SHARED_LIBADD)
fi
