/*
 * The pieces ext/ferry's sequential loop (ferry_loop.c, ferry_loop_job.c) and its
 * Fiber-mode hot path (ferry_fiber*.c) share: one copy, so a fix reaches both modes.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "main/php_streams.h"
#include "zend_exceptions.h"
#include "ferry_job_common.h"

/*
 * HttpWorker::restoreGlobals() / Superglobals::restore(). One a request did not write to is
 * still that very array: nothing to do.
 */
void ferry_restore_globals(zval *kept)
{
	if (Z_TYPE_P(kept) != IS_ARRAY) {
		return;
	}
	zend_string *name;
	zval *value;
	ZEND_HASH_FOREACH_STR_KEY_VAL(Z_ARRVAL_P(kept), name, value) {
		if (!name) {
			continue;
		}
		zval *slot = zend_hash_find(&EG(symbol_table), name);
		if (slot && Z_TYPE_P(slot) == IS_INDIRECT) {
			slot = Z_INDIRECT_P(slot);
		}
		if (!slot || Z_TYPE_P(slot) == IS_UNDEF) {
			/* unset($_GET) at the top level: PHP's own assignment would define it again */
			Z_TRY_ADDREF_P(value);
			if (slot) {
				ZVAL_COPY_VALUE(slot, value);
			} else {
				zend_hash_add_new(&EG(symbol_table), name, value);
			}
			continue;
		}
		ZVAL_DEREF(slot);
		if (Z_TYPE_P(slot) == IS_ARRAY && Z_TYPE_P(value) == IS_ARRAY && Z_ARR_P(slot) == Z_ARR_P(value)) {
			continue;
		}
		ferry_assign(slot, value);
	} ZEND_HASH_FOREACH_END();
}

int ferry_stream_fd(zval *res)
{
	php_stream *stream = (php_stream *) zend_fetch_resource2(Z_RES_P(res), "stream", php_file_le_stream(),
		php_file_le_pstream());
	if (!stream) {
		return -1;
	}
	/* Bytes PHP buffered would be read after ours. */
	if (stream->writepos > stream->readpos) {
		return -2;
	}
	int fd = -1;
	if (php_stream_cast(stream, PHP_STREAM_AS_FD_FOR_SELECT | PHP_STREAM_CAST_INTERNAL, (void **) &fd, 0) != SUCCESS) {
		return -2;
	}
	return fd;
}

bool ferry_relay_fds(zval *in, zval *out, int *fd_in, int *fd_out)
{
	/* Both looked up even when the first fails, as the two loops always did. */
	*fd_in = ferry_stream_fd(in);
	*fd_out = ferry_stream_fd(out);
	return *fd_in != -1 && *fd_out != -1;
}

zend_class_entry *ferry_find_class(const char *fn, const char *name)
{
	zend_string *n = zend_string_init(name, strlen(name), 0);
	zend_class_entry *ce = zend_lookup_class(n);
	zend_string_release(n);
	if (!ce && !EG(exception)) {
		zend_throw_error(NULL, "Ferry\\Ext\\%s(): class %s not found", fn, name);
	}
	return ce;
}

bool ferry_find_response_fns(const char *fn, zend_class_entry *response_ce, zend_function **context_fn,
	zend_function **html_fn, zend_function **json_fn)
{
	HashTable *methods = &response_ce->function_table;
	*context_fn = zend_hash_str_find_ptr(methods, "context", sizeof("context") - 1);
	*html_fn = zend_hash_str_find_ptr(methods, "html", sizeof("html") - 1);
	*json_fn = zend_hash_str_find_ptr(methods, "json", sizeof("json") - 1);
	if (!*context_fn || !*html_fn || !*json_fn || !((*html_fn)->common.fn_flags & ZEND_ACC_STATIC)
		|| !((*json_fn)->common.fn_flags & ZEND_ACC_STATIC)) {
		zend_throw_error(NULL, "Ferry\\Ext\\%s(): Ferry\\Worker\\Http\\Response has no context(), "
			"static html() or static json()", fn);
		return false;
	}
	return true;
}

zend_object *ferry_take_exception(void)
{
	zend_object *ex = EG(exception);
	if (zend_is_unwind_exit(ex) || zend_is_graceful_exit(ex)) {
		return NULL;
	}
	GC_ADDREF(ex);
	zend_clear_exception();
	return ex;
}
