/*
 * What ferry_direct_log.c (the ids, the buffer, the pipe) and ferry_direct_log_fmt.c (the
 * line's bytes) share.
 */
#ifndef FERRY_DIRECT_LOG_INT_H
#define FERRY_DIRECT_LOG_INT_H

#include "ferry_direct_log.h"

/*
 * The most a request's own fields take of a line, as written (escaped): with the rest, a
 * line stays under PIPE_BUF (4096), which a pipe writes whole.
 */
#define FIELD_METHOD 128
#define FIELD_URI 1400
#define FIELD_REFERER 1024
#define FIELD_UA 768
#define LINE_MAX_BYTES 4096

/* The fields a request brings. */
typedef struct {
	struct timespec start;
	const char *id, *remote, *method, *uri, *proto, *referer, *ua;
	size_t id_len, remote_len, method_len, uri_len, proto_len, referer_len, ua_len;
} ferry_dlog_text;

/* What its answer adds. */
typedef struct {
	int status;
	int64_t bytes;
	uint64_t duration, wait, php; /* ns */
	long pid;                     /* 0: PHP did not run */
} ferry_dlog_end;

void ferry_dlog_json_str(smart_str *out, const char *s, size_t n, size_t budget);
void ferry_dlog_escaped(smart_str *out, const char *s, size_t n, size_t budget);
/* The request's fields, formatted: the status and the rest go at *split. */
void ferry_dlog_fields(smart_str *out, size_t *split, bool json, const ferry_dlog_text *t);
/* The whole line into dst: its length, 0 when it does not fit in cap. */
size_t ferry_dlog_line(char *dst, size_t cap, bool json, const char *fields, size_t len, size_t split, const ferry_dlog_end *e);

#endif
