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
	uint64_t expire;      /* written by the server: the busy_since of the request it ends for exec_ttl */
	uint64_t log_dropped; /* access log lines dropped: the server did not read them in time */
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
	bool php_path;    /* every request is handed to php/worker whole (the leak watch's) */
	/* server.uploads, and what its strings point to (for the worker's life) */
	ferry_multipart_limits uploads;
	char *uploads_dir;
	char **forbid;
	/* the page the server reads (FERRY_DIRECT_STATS), or NULL */
	volatile struct direct_stats *stats;
	/* one slot more than the parser may fill: the request id a request without one is given */
	ferry_http_field fields[MAX_FIELDS + 1];
	/* fiber mode (Ferry\Ext\direct_poll(), ferry_direct_fiber.c) */
	bool fibers;
	int timer;           /* a timerfd in the epoll set, due at next_deadline: PHP's loop wakes for it */
	zval batch;          /* the requests handed since the last poll: [id, context, body] each */
	zval gone;           /* the ids of running requests whose client left since the last poll */
	direct_conn **pinned; /* the connections whose request runs in PHP */
	size_t pinned_n, pinned_cap;
	direct_conn **resumed; /* answered since the last poll: their next request, or their idle wait */
	size_t resumed_n, resumed_cap;
} direct_state;

extern direct_state ferry_direct_state;
#define D ferry_direct_state
/* epoll tags for the two sockets that are not connections */
extern char ferry_direct_tag_listen, ferry_direct_tag_relay;

typedef enum { STEP_MORE, STEP_DONE, STEP_PHP, STEP_THROWN } step;

/* ferry_direct.c, for ferry_direct_fiber.c */
#define DIRECT_FIBER_ID 0x80000000u
bool direct_setup(zend_long lfd, int relay, HashTable *limits);
step direct_serve_one(direct_conn *c);
#include "ferry_frame.h"
void direct_answer_frame(direct_conn *c, const ferry_frame *f, const char *payload);

/* ferry_direct_fiber.c */
void direct_fiber_hand(direct_conn *c, const ferry_http_request *r, const char *remote, const char *host, size_t host_len,
	bool https, const direct_form *form, zval *cookies, zend_string *body, uint32_t id);
void direct_fiber_forget(direct_conn *c);
void direct_fiber_watch(direct_conn *c);
void direct_fiber_shutdown(void);
void direct_fiber_push(direct_conn ***list, size_t *n, size_t *cap, direct_conn *c);
bool direct_fiber_drop(direct_conn **list, size_t *n, direct_conn *c);
/* exec_ttl's clock: when the oldest request in flight started */
void direct_fiber_publish_busy(void);
void direct_fiber_arm_timer(void);
direct_conn *direct_fiber_pinned(uint32_t id);

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

/* ferry_direct_ttl.c: the 504 at exec_ttl, from the signal the server sends */
void ferry_direct_ttl_install(void);
/* c's request, started at since (ms), may be answered 504 until it writes anything */
void ferry_direct_ttl_arm(direct_conn *c, uint64_t since);
void ferry_direct_ttl_disarm(direct_conn *c);
/* a part of c's streamed answer went out */
void ferry_direct_ttl_progress(direct_conn *c);

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
