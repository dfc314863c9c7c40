/*
 * Ferry's upload temp files as PHP's own uploads: is_uploaded_file() and
 * move_uploaded_file() only accept paths in SG(rfc1867_uploaded_files), which PHP's
 * multipart parser fills under FPM and nothing fills in a CLI worker.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "SAPI.h"
#include "php_ferry.h"

static void ferry_upload_dtor(zval *zv)
{
	zend_string_release(Z_STR_P(zv));
}

/*
 * Drops the table without unlinking anything: the server owns the temp files and removes
 * them itself, while PHP's own destroy_uploaded_files_hash() would delete them.
 */
void ferry_forget_uploads(void)
{
	if (FERRY_G(owns_uploads) && SG(rfc1867_uploaded_files)) {
		zend_hash_destroy(SG(rfc1867_uploaded_files));
		FREE_HASHTABLE(SG(rfc1867_uploaded_files));
		SG(rfc1867_uploaded_files) = NULL;
	}
	FERRY_G(owns_uploads) = false;
}

ZEND_FUNCTION(ferry_register_uploaded_file)
{
	zend_string *path;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_PATH_STR(path)
	ZEND_PARSE_PARAMETERS_END();

	if (ZSTR_LEN(path) == 0) {
		zend_argument_value_error(1, "must not be empty");
		RETURN_THROWS();
	}
	if (!SG(rfc1867_uploaded_files)) {
		ALLOC_HASHTABLE(SG(rfc1867_uploaded_files));
		zend_hash_init(SG(rfc1867_uploaded_files), 8, NULL, ferry_upload_dtor, 0);
		FERRY_G(owns_uploads) = true;
	}
	/* Values are zend_strings, as in rfc1867.c, whose code may read them. */
	zval value;
	ZVAL_STR_COPY(&value, path);
	zend_hash_update(SG(rfc1867_uploaded_files), path, &value);
}
