#ifndef PHP_FERRY_H
#define PHP_FERRY_H

#include "php.h"

#define PHP_FERRY_VERSION "0.1.0"
#define PHP_FERRY_NS "Ferry\\Ext"

extern zend_module_entry ferry_module_entry;
#define phpext_ferry_ptr &ferry_module_entry

ZEND_BEGIN_MODULE_GLOBALS(ferry)
	/* between request_begin() and request_end(): PHP's header functions are live */
	bool in_request;
	/* the status line's phrase as it was when the headers went out; PHP frees the line itself then */
	zend_string *sent_reason;
	/* http_response_code() when the headers went out: PHP 8.2 still lets it change after */
	int sent_status;
	/* SG(rfc1867_uploaded_files) was created by us, so we may drop it whole */
	bool owns_uploads;
	/* request_end()'s answer when nothing was collected, shared (refcounted) between requests */
	zval plain_result;
	/* classes request_read() and frames_read() fill, checked once per request (RSHUTDOWN clears) */
	zend_class_entry *request_ce;
	uint32_t request_offsets[16];
	zend_class_entry *frame_ce;
	uint32_t frame_offsets[4];
	/* php/msgpack's BufferUnpacker, for msgpack_unpack_message() */
	zend_class_entry *unpacker_ce;
	uint32_t unpacker_offsets[10];
ZEND_END_MODULE_GLOBALS(ferry)

ZEND_EXTERN_MODULE_GLOBALS(ferry)
#define FERRY_G(v) ZEND_MODULE_GLOBALS_ACCESSOR(ferry, v)

#if defined(ZTS) && defined(COMPILE_DL_FERRY)
ZEND_TSRMLS_CACHE_EXTERN()
#endif

/* ferry_sapi.c */
void ferry_sapi_minit(void);
void ferry_sapi_mshutdown(void);
void ferry_sapi_rshutdown(void);
/* request_begin(), and request_end(false, false) into *result (undefined after an
 * exception); true when nothing was collected (status 200, no header, no phrase) */
void ferry_request_start(void);
bool ferry_request_finish(zval *result);

/* ferry_output.c: a job's output at the SAPI's write, under one removable default buffer.
 * begin() opens it; clean(): nothing was written since (or, between jobs, nothing open);
 * drop() ends a clean job's capture. */
void ferry_output_begin(void);
bool ferry_output_clean(void);
void ferry_output_drop(void);
void ferry_output_rshutdown(void);

/* ferry_loop.c */
void ferry_loop_rshutdown(void);
void ferry_direct_rshutdown(void);

/* ferry_uploads.c */
void ferry_forget_uploads(void);

/* ferry_session.c */
void ferry_session_reset(void);

/* ferry_frame_php.c */
void ferry_frame_minit(int module_number);

/* ferry_ser_php.c: forgets the classes looked up during the request */
void ferry_class_cache_reset(void);
/* Request::fromContext() for the usual request: 1 built into *out, 0 the PHP path must
 * take it, -1 an Error was thrown */
int ferry_request_build(const char *context, size_t context_len, zend_string *body, zval *out);

#endif
