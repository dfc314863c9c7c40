/*
 * What the sequential loop (ferry_loop*.c) and the Fiber-mode hot path (ferry_fiber*.c)
 * both do the same way, kept once so the two cannot drift apart.
 */
#ifndef FERRY_JOB_COMMON_H
#define FERRY_JOB_COMMON_H

#include <sys/uio.h>

#include "php.h"

/* $slot = $value as PHP assigns: the old value is released only once the new one is in. */
void ferry_assign(zval *slot, zval *value);
/* Each superglobal back to the array HttpWorker kept before the first request ($kept). */
void ferry_restore_globals(zval *kept);
/* Writes all of v to fd, waiting when it is full; false with relay_exception thrown. v is consumed. */
bool ferry_write_all(int fd, zend_class_entry *relay_exception, struct iovec *v, int count, size_t total);
/* A stream's file descriptor; -1 not a stream (an error is thrown), -2 PHP buffered bytes of it. */
int ferry_stream_fd(zval *res);
/* Both relay ends' ferry_stream_fd(); false when either is not a stream (an error is thrown). */
bool ferry_relay_fds(zval *in, zval *out, int *fd_in, int *fd_out);
/* fn names the Ferry\Ext function in the error thrown when the class is missing. */
zend_class_entry *ferry_find_class(const char *fn, const char *name);
zval *ferry_find_static(zend_class_entry *ce, const char *name);

#endif
