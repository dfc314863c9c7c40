/*
 * What the sequential loop (ferry_loop*.c) and the Fiber-mode hot path (ferry_fiber*.c)
 * both do the same way, kept once so the two cannot drift apart.
 */
#ifndef FERRY_JOB_COMMON_H
#define FERRY_JOB_COMMON_H

#include <errno.h>
#include <poll.h>
#include <sys/uio.h>

#include "php.h"
#include "zend_exceptions.h"

/*
 * $slot = $value as PHP assigns: the old value is released only once the new one is in (its
 * destructor may read the slot). Inline: it runs several times per job on the hot path.
 */
static zend_always_inline void ferry_assign(zval *slot, zval *value)
{
	zval old;
	ZVAL_COPY_VALUE(&old, slot);
	ZVAL_COPY(slot, value);
	zval_ptr_dtor(&old);
}

/* Each superglobal back to the array HttpWorker kept before the first request ($kept). */
void ferry_restore_globals(zval *kept);

/*
 * Writes all of v to fd, waiting when it is full; false with relay_exception thrown. v is
 * consumed. Inline: every answer goes through it, and a call out costs the sequential loop
 * ~25 instructions per request (bench/ext-instructions.sh).
 */
static zend_always_inline bool ferry_write_all(int fd, zend_class_entry *relay_exception, struct iovec *v, int count,
	size_t total)
{
	size_t written = 0;
	while (written < total) {
		ssize_t n = writev(fd, v, count);
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			/* The relay may be non-blocking: wait for room rather than fail. */
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				struct pollfd p = {fd, POLLOUT, 0};
				(void) poll(&p, 1, -1);
				continue;
			}
			zend_throw_exception_ex(relay_exception, 0, "relay write failed after %zu of %zu bytes: %s",
				written, total, strerror(errno));
			return false;
		}
		written += (size_t) n;
		while (count > 0 && (size_t) n >= v->iov_len) {
			n -= (ssize_t) v->iov_len;
			v++;
			count--;
		}
		if (count > 0) {
			v->iov_base = (char *) v->iov_base + n;
			v->iov_len -= (size_t) n;
		}
	}
	return true;
}

/* A stream's file descriptor; -1 not a stream (an error is thrown), -2 PHP buffered bytes of it. */
int ferry_stream_fd(zval *res);
/* Both relay ends' ferry_stream_fd(); false when either is not a stream (an error is thrown). */
bool ferry_relay_fds(zval *in, zval *out, int *fd_in, int *fd_out);
/* fn names the Ferry\Ext function in the error thrown when the class is missing. */
zend_class_entry *ferry_find_class(const char *fn, const char *name);
/* Response's context(), static html() and static json(); false with an Error naming fn thrown. */
bool ferry_find_response_fns(const char *fn, zend_class_entry *response_ce, zend_function **context_fn,
	zend_function **html_fn, zend_function **json_fn);
/* Takes the pending exception, unless it is exit(), which must unwind on. */
zend_object *ferry_take_exception(void);

/*
 * $response->context(): Response::context() fills that cache once it has made an answer, and
 * reading it skips the call. Inline: once per answer, ~15 instructions a call out.
 */
static zend_always_inline void ferry_answer_context(zend_object *response, uint32_t p_preset, uint32_t p_status,
	zval *preset_contexts, zend_function *context_fn, zval *out)
{
	zval *preset = OBJ_PROP(response, p_preset);
	zval *status = OBJ_PROP(response, p_status);
	zval *cache = preset_contexts;
	ZVAL_DEREF(cache);
	if (Z_TYPE_P(preset) == IS_STRING && Z_TYPE_P(status) == IS_LONG && Z_TYPE_P(cache) == IS_ARRAY) {
		zval *by_type = zend_hash_index_find(Z_ARRVAL_P(cache), (zend_ulong) Z_LVAL_P(status));
		zval *context = by_type && Z_TYPE_P(by_type) == IS_ARRAY
			? zend_symtable_find(Z_ARRVAL_P(by_type), Z_STR_P(preset)) : NULL;
		if (context && Z_TYPE_P(context) == IS_STRING) {
			ZVAL_COPY(out, context);
			return;
		}
	}
	zend_call_known_instance_method_with_0_params(context_fn, response, out);
}

#endif
