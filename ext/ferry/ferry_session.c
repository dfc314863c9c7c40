/*
 * The session module's request boundary. Under FPM its RSHUTDOWN writes an open session
 * and forgets the id, and the next request starts from nothing. A worker never reaches
 * RSHUTDOWN between requests, so without this the next session_start() would reuse the
 * previous visitor's id (PS(id) outlives session_write_close()) and $_SESSION would still
 * hold their data.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "ext/session/php_session.h"
#include "php_ferry.h"

void ferry_session_reset(void)
{
	if (PS(session_status) == php_session_active) {
		php_session_flush(1);
	}
	if (PS(id)) {
		zend_string_release(PS(id));
		PS(id) = NULL;
	}
	if (!Z_ISUNDEF(PS(http_session_vars))) {
		zval_ptr_dtor(&PS(http_session_vars));
		ZVAL_UNDEF(&PS(http_session_vars));
	}
	zend_hash_str_del(&EG(symbol_table), "_SESSION", sizeof("_SESSION") - 1);
}
