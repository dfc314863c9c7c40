#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "SAPI.h"
#include "ext/standard/info.h"
#include "php_ferry.h"
#include "ferry_arginfo.h"
#include "ferry_msgpack.h"
#include "ferry_fiber.h"
#include "ferry_fiberio.h"
#include "ferry_contract.h"

ZEND_DECLARE_MODULE_GLOBALS(ferry)

static PHP_GINIT_FUNCTION(ferry)
{
#if defined(COMPILE_DL_FERRY) && defined(ZTS)
	ZEND_TSRMLS_CACHE_UPDATE();
#endif
	memset(ferry_globals, 0, sizeof(*ferry_globals));
}

static PHP_MINIT_FUNCTION(ferry)
{
	ferry_sapi_minit();
	ferry_frame_minit(module_number);
	ferry_msgpack_minit(module_number);
	ferry_contract_minit(module_number);
	return SUCCESS;
}

static PHP_MSHUTDOWN_FUNCTION(ferry)
{
	ferry_sapi_mshutdown();
	ferry_msgpack_mshutdown(module_number);
	return SUCCESS;
}

static PHP_RINIT_FUNCTION(ferry)
{
#if defined(COMPILE_DL_FERRY) && defined(ZTS)
	ZEND_TSRMLS_CACHE_UPDATE();
#endif
	return SUCCESS;
}

static PHP_RSHUTDOWN_FUNCTION(ferry)
{
	ferry_sapi_rshutdown();
	ferry_loop_rshutdown();
	ferry_direct_rshutdown();
	ferry_output_rshutdown();
	ferry_fiber_rshutdown();
	ferry_fiberio_rshutdown();
	return SUCCESS;
}

static PHP_MINFO_FUNCTION(ferry)
{
	php_info_print_table_start();
	php_info_print_table_row(2, "ferry support", "enabled");
	php_info_print_table_row(2, "version", PHP_FERRY_VERSION);
	php_info_print_table_row(2, "SAPI header capture", sapi_module.name);
	php_info_print_table_row(2, "MessagePack codec", "enabled (decimal, uuid, error, timestamp via php/msgpack)");
	php_info_print_table_end();
	DISPLAY_INI_ENTRIES();
}

/* request_end() closes sessions the way the session module's RSHUTDOWN would. */
static const zend_module_dep ferry_deps[] = {
	ZEND_MOD_REQUIRED("session")
	ZEND_MOD_END
};

zend_module_entry ferry_module_entry = {
	STANDARD_MODULE_HEADER_EX,
	NULL,
	ferry_deps,
	"ferry",
	ferry_functions,
	PHP_MINIT(ferry),
	PHP_MSHUTDOWN(ferry),
	PHP_RINIT(ferry),
	PHP_RSHUTDOWN(ferry),
	PHP_MINFO(ferry),
	PHP_FERRY_VERSION,
	PHP_MODULE_GLOBALS(ferry),
	PHP_GINIT(ferry),
	NULL,
	NULL,
	STANDARD_MODULE_PROPERTIES_EX
};

#ifdef COMPILE_DL_FERRY
# ifdef ZTS
ZEND_TSRMLS_CACHE_DEFINE()
# endif
ZEND_GET_MODULE(ferry)
#endif
