/*
 * Direct mode (server.mode: direct): the worker accepts and serves HTTP/1.1 connections
 * itself, on the listening socket the server hands down (FERRY_DIRECT_FD). ferry_direct.c
 * is the event loop, ferry_direct_conn.c one connection's reading and writing,
 * ferry_direct_answer.c turns answer frames (docs/protocol.md) into HTTP/1.1 bytes and
 * ferry_direct_ctx.c a parsed request into the job context the Go front would have sent.
 * The jobs themselves run through the same code as the relay's (ferry_loop_job.c, and
 * php/worker for everything the C path hands back), so both modes answer alike.
 */
#ifndef FERRY_DIRECT_H
#define FERRY_DIRECT_H

#include <stdbool.h>
#include <stdint.h>

#include "php.h"
#include "zend_smart_str.h"
#include "ferry_http.h"
#include "ferry_direct_log.h"

typedef struct {
	ferry_http_limits http;
	uint64_t read_header_ms, read_ms, write_ms, idle_ms;
	size_t max_connections;
} direct_limits;

typedef enum {
	CONN_READING, /* waiting for a whole request */
	CONN_WRITING, /* answers waiting for the client to take them */
	CONN_LINGER,  /* the last answer is out and the write side shut: what the client still sends is dropped */
} conn_phase;

typedef enum {
	STREAM_NONE,    /* no answer in parts under way */
	STREAM_CHUNKED, /* after a final head sent with Transfer-Encoding: chunked */
	STREAM_EOF,     /* after a final head to an HTTP/1.0 client: the body ends with the connection */
} stream_state;

typedef struct direct_conn {
	int fd;
	conn_phase phase;
	bool close_after;   /* the last answer says Connection: close, or the client asked for it */
	bool head_request;  /* the request being answered is HEAD: no body goes out */
	bool http10;        /* the request being answered is HTTP/1.0 */
	bool continued;     /* 100 Continue sent for the request being read */
	bool started;       /* bytes of the current request have arrived (idle vs. header timeout) */
	bool served;        /* it has had an answer: between requests it is an idle keep-alive connection */
	bool graced;        /* the worker is stopping, and its wait for a next request is set */
	bool eof;           /* the client shut its side: what it sent is answered, then the connection closes */
	stream_state stream;
	/* input: bytes [0, in_len) of in, the current request's head first */
	char *in;
	size_t in_len, in_cap;
	/* a chunked body being decoded: its state, the input position, the body bytes after the head */
	ferry_http_chunked chunked;
	size_t raw_pos, body_len;
	/* output: bytes [out_off, out.len) still to write, then file_left bytes of file_fd from file_off */
	smart_str out;
	size_t out_off;
	int file_fd;        /* -1: none */
	off_t file_off;
	uint64_t file_left;
	uint64_t deadline;  /* ms on the monotonic clock; 0: none */
	char remote[64];    /* ip:port, as the front names it */
	uint32_t job;       /* fiber mode: the id of its request running in PHP, 0 for none (ferry_direct_fiber.c) */
	uint64_t job_since; /* wall-clock ms that request was handed */
	int ttl_slot;       /* its request may get exec_ttl's 504 from slot ttl_slot - 1 (ferry_direct_ttl.c); 0: none */
	bool job_answered;  /* bytes of that request's answer were written */
	smart_str spooled;  /* files of a multipart body its running request holds, each NUL-terminated */
	ferry_dlog_req log; /* its request in flight: id and access log line (ferry_direct_log.c) */
	struct direct_conn *prev, *next;
} direct_conn;

/* Monotonic milliseconds. */
uint64_t ferry_direct_now(void);

/*
 * Appends the answer an answer frame's context and body make to c->out: a final answer, an
 * informational head, or one part of an answer in parts (flags: the frame's; stream: its
 * STREAM bit). False when the context is not a valid answer (the client then gets a 502 if
 * nothing went out yet).
 */
bool ferry_direct_answer(direct_conn *c, const char *context, size_t context_len, const char *body, size_t body_len,
	bool stream, bool error);
/* A whole answer with no body made by the server side (OPTIONS *'s 200). */
void ferry_direct_empty(direct_conn *c, int status);
/* A whole error answer made by the server side (the front's fail(): text/plain, nosniff). */
void ferry_direct_fail(direct_conn *c, int status, const char *message);

/* A multipart body read as the front reads it: the context's form and files, serialized. */
typedef struct {
	bool parsed;
	size_t fields, files;
	smart_str form, uploads; /* the items of the 'form' and 'files' lists, serialized */
	smart_str paths;         /* the spooled files, each NUL-terminated, removed after the answer */
} direct_form;

/*
 * Appends the job context (docs/protocol.md, "HTTP request context") of the request r, from
 * the client given; with cookies ($_COOKIE as PHP parsed them) when not NULL.
 */
void ferry_direct_context(smart_str *out, const ferry_http_request *r, const char *remote, const char *host,
	size_t host_len, bool https, const direct_form *form, zval *cookies);
#include "ferry_multipart.h"
/*
 * A multipart/form-data body (by its Content-Type) read into out as the front reads it: 0,
 * or the status the front refuses it with (*error its text). 0 with out->parsed false: not
 * multipart, the body reaches PHP as it is.
 */
int ferry_direct_multipart(const ferry_http_request *r, const char *body, size_t len, const ferry_multipart_limits *limits,
	direct_form *out, const char **error);
/* $_COOKIE for r's Cookie fields, by PHP's own parser. */
void ferry_direct_cookies(const ferry_http_request *r, zval *out);

/* The connection a job being finished in PHP answers (Ferry\Ext\direct_answer()). */
extern direct_conn *ferry_direct_current;
/* Writes c->out to the socket, waiting up to the write timeout; false when the client is gone. */
bool ferry_direct_flush_blocking(direct_conn *c, uint64_t write_ms);
extern uint64_t ferry_direct_write_ms;
/* Removes the files c's request spooled (uploads): its answer is complete, and the client
 * may look for them as soon as it has it. */
void ferry_direct_answered(direct_conn *c);

#endif
