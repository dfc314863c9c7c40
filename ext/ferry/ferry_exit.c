/*
 * exit() as "end of this response": legacy front controllers end a page with exit or
 * die, which in a worker would end the process.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "php_ferry.h"

ZEND_FUNCTION(ferry_catch_exit)
{
	zend_fcall_info fci;
	zend_fcall_info_cache fcc;
	zval retval;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_FUNC(fci, fcc)
	ZEND_PARSE_PARAMETERS_END();

	int saved_status = EG(exit_status);
	fci.retval = &retval;
	ZVAL_UNDEF(&retval);
	zend_call_function(&fci, &fcc);
	zval_ptr_dtor(&retval);
	/* exit() unwinds with an object no catch or finally sees; stopping it here makes it
	 * end the callback instead of the worker. */
	if (EG(exception) && zend_is_unwind_exit(EG(exception))) {
		int status = EG(exit_status);
		zend_clear_exception();
		EG(exit_status) = saved_status;
		RETURN_LONG(status);
	}
	if (EG(exception)) {
		RETURN_THROWS();
	}
	RETURN_NULL();
}
