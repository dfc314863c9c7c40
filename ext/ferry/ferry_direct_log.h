/*
 * Direct mode's access log and request ids (server.access_log, server.request_id): what the
 * Go front's internal/observe does around each request, done by the worker that serves it.
 * A finished request's line is formatted here exactly as the front formats its own (json or
 * combined), buffered, and written in whole lines of at most PIPE_BUF bytes to the FIFO the
 * server reads (FERRY_DIRECT_LIMITS "access_log"), so that the lines of every worker reach
 * the server's one log file whole, never interleaved.
 */
#ifndef FERRY_DIRECT_LOG_H
#define FERRY_DIRECT_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "php.h"
#include "zend_smart_str.h"
#include "ferry_http.h"

#define FERRY_REQUEST_ID_MAX 128

/* One connection's request in flight, from its whole head to its answer. */
typedef struct {
	bool open;            /* begun and not yet logged */
	bool php;             /* the handler ran (the line names this worker's pid) */
	int status;           /* the final answer's, 0 while none went out */
	int64_t bytes;        /* its body's declared length: 0 for HEAD and an answer in parts, as the front counts */
	struct timespec start;
	uint64_t t0, run;     /* monotonic ns: the request whole, the handler started (0: never) */
	uint8_t id_len;
	char id[FERRY_REQUEST_ID_MAX];
	smart_str fields;     /* the line's fields known at the start: [0, split) before the status, the rest after */
	size_t split;
} ferry_dlog_req;

struct direct_conn;

/* Reads "request_id" and "access_log" of the limits; false (an Error thrown) when the FIFO cannot be opened. */
bool ferry_dlog_setup(HashTable *limits);
/*
 * A whole request is about to run: its id taken or made and set on r as the front sets it
 * (r must have one free slot past field_slots for it), its time and fields noted.
 */
void ferry_dlog_begin(struct direct_conn *c, ferry_http_request *r);
/* The handler starts now; or (ran false) it did not answer after all: the worker died under it, and
 * the line names no pid and no PHP time, as the front's names none for a job PHP never answered. */
void ferry_dlog_run(struct direct_conn *c, bool ran);
/* A final answer's head went out (status, and its body's length, -1 when in parts). */
void ferry_dlog_answered(struct direct_conn *c, int status, int64_t length);
/* The response carries the request's id back. */
void ferry_dlog_echo(smart_str *out, const struct direct_conn *c);
/* Whether an answer's own X-Request-Id field is dropped (the server's echo replaces it, as the front's does). */
bool ferry_dlog_drops(const char *name, size_t len);
/* The request is answered (or its client gone): its line is buffered. */
void ferry_dlog_finish(struct direct_conn *c);
/* Frees what a connection held. */
void ferry_dlog_free(struct direct_conn *c);
/* Writes the buffered lines, or drops them when the server's pipe is full. */
void ferry_dlog_flush(void);
/* epoll_wait(), waking in time to write lines buffered for FLUSH_AFTER_MS, and writing them once they are that old. */
int ferry_dlog_wait(int epfd, void *events, int max, int timeout);
/* Fiber mode, whose loop is PHP's: writes the lines if they are due; the CLOCK_MONOTONIC ms at
 * which those still buffered will be (0: none), for the loop's timer. */
uint64_t ferry_dlog_due(void);

/* For tests (and the fuzzer): whether the front's validRequestID() would take s. */
bool ferry_request_id_valid(const char *s, size_t len);

#endif
