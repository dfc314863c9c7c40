/*
 * What ferry_direct.c (the event loop, the jobs) and ferry_direct_conn.c (one connection's
 * accepting, reading, writing and closing) share: the worker's direct-mode state, one per
 * process, and the connection functions the loop calls.
 */
#ifndef FERRY_DIRECT_INT_H
#define FERRY_DIRECT_INT_H

#include "ferry_direct.h"
#include "ferry_forwarded.h"
#include "ferry_multipart.h"

#define READ_SIZE 16384
#define MAX_FIELDS 256
#define OUT_HIGH_WATER (256 * 1024) /* pipelined answers buffered before the loop writes */
#define DRAIN_GRACE_MS 1000 /* a stopping worker's wait for the next request on a keep-alive connection */
/*
 * After its last answer a connection is shut for writing, and what the client still sends
 * (the rest of a refused body, requests pipelined behind a close) is read and dropped for
 * up to this long: closed at once, unread bytes would make the kernel reset it, and the
 * client could lose the answer it has not read yet.
 */
#define LINGER_MS 1000

/*
 * What the server reads of this worker, which it cannot see serve (docs/protocol.md, "Direct
 * mode"): a shared page of 64-bit words, each written by this process alone.
 */
struct direct_stats {
	uint64_t requests;    /* requests served */
	uint64_t busy_since;  /* wall-clock ms when the running request started, 0 between requests (exec_ttl) */
	uint64_t connections; /* connections open */
	uint64_t accepted;    /* connections accepted */
};

typedef struct {
	int epfd, lfd, relay;
	bool listening; /* the listening socket is in the epoll set */
	bool ready;
	direct_limits limits;
	zend_long max_jobs, served;
	direct_conn *conns;
	size_t count;
	uint64_t next_deadline;
	uint32_t next_id;
	bool draining; /* every answer from now on closes its connection */
	/* server.trusted_proxies: whose Forwarded and X-Forwarded-* name the client */
	ferry_trusted trusted;
	bool underscores; /* server.underscores_in_headers */
	/* server.uploads, and what its strings point to (for the worker's life) */
	ferry_multipart_limits uploads;
	char *uploads_dir;
	char **forbid;
	/* the page the server reads (FERRY_DIRECT_STATS), or NULL */
	volatile struct direct_stats *stats;
	/* one slot more than the parser may fill: the request id a request without one is given */
	ferry_http_field fields[MAX_FIELDS + 1];
} direct_state;

extern direct_state ferry_direct_state;
#define D ferry_direct_state
/* epoll tags for the two sockets that are not connections */
extern char ferry_direct_tag_listen, ferry_direct_tag_relay;

typedef enum { STEP_MORE, STEP_DONE, STEP_PHP, STEP_THROWN } step;

/* ferry_direct_conn.c */
void direct_set_deadline(direct_conn *c, uint64_t ms);
void direct_watch_listener(bool on);
void direct_remove_spooled(direct_conn *c);
void direct_conn_close(direct_conn *c);
void direct_conn_events(direct_conn *c, uint32_t events);
void direct_chunked_reset(direct_conn *c);
void direct_accept_some(size_t most);
bool direct_flush_some(direct_conn *c);
bool direct_out_pending(direct_conn *c);
bool direct_grow_in(direct_conn *c);
void direct_refuse(direct_conn *c, int status, const char *why);
step direct_cut_short(direct_conn *c);
void direct_consume(direct_conn *c, size_t n);
bool direct_settle(direct_conn *c);
bool direct_read_some(direct_conn *c);
void direct_linger(direct_conn *c);
void direct_expire(void);

/* ferry_direct_json.c: a cursor over one JSON text */
typedef struct {
	const char *p, *end;
} ferry_json;

void ferry_json_ws(ferry_json *j);
/* the character c next (after whitespace): taken */
bool ferry_json_lit(ferry_json *j, char c);
/* a string, decoded into s (reset first) */
bool ferry_json_str(ferry_json *j, smart_str *s);
/* a non-negative integer of at most 18 digits */
bool ferry_json_integer(ferry_json *j, zend_long *v);
bool ferry_json_boolean(ferry_json *j, bool *v);
/* any value, skipped (an unknown key's) */
bool ferry_json_skip(ferry_json *j, int depth);

#endif
