/*
 * HTTP/1.1 request parsing for direct mode (server.mode: direct), where a worker reads its
 * clients' requests itself. Plain C with no PHP in it, so that libFuzzer runs it alone
 * (fuzz/http_fuzz.c). The verdicts are the Go front's (internal/gateway: fasthttp plus
 * grammar.go and check.go): every request the front refuses is refused here with the same
 * status, and every request it serves is served with the same method, target, host and
 * header fields (cmd/ferry/direct_verdicts_e2e_test.go compares the two).
 *
 * Nothing here allocates: a parsed head points into the caller's buffer, and the header
 * slots are the caller's array.
 */
#ifndef FERRY_HTTP_H
#define FERRY_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
	FERRY_HTTP_OK = 0,        /* a whole head: *consumed is its length, the CRLF CRLF included */
	FERRY_HTTP_NEED_MORE = 1, /* no verdict yet: call again with more bytes (from the start) */
	/* Refusals: the status the client gets, then the connection is closed. */
	FERRY_HTTP_BAD_REQUEST = 400,
	FERRY_HTTP_METHOD_NOT_ALLOWED = 405, /* CONNECT, as the front answers it */
	FERRY_HTTP_PAYLOAD_TOO_LARGE = 413,
	FERRY_HTTP_URI_TOO_LONG = 414,    /* never returned: the front answers a long target 431 */
	FERRY_HTTP_HEADERS_TOO_LARGE = 431,
	FERRY_HTTP_NOT_IMPLEMENTED = 501, /* never returned: the front answers other codings 400 */
	FERRY_HTTP_VERSION_NOT_SUPPORTED = 505,
} ferry_http_status;

typedef struct {
	/* the whole head may be at most this long (server.max_header_size); 0 means 1 MiB */
	size_t max_head;
	/* at most this many header fields; 0 means no limit but max_head's */
	size_t max_headers;
	/* a declared Content-Length above this is FERRY_HTTP_PAYLOAD_TOO_LARGE (server.max_body_size); 0: no limit */
	uint64_t max_body;
} ferry_http_limits;

typedef struct {
	const char *name, *value; /* the value without its surrounding whitespace; one line (obs-fold is refused) */
	size_t name_len, value_len;
} ferry_http_field;

typedef struct {
	const char *method, *target, *path, *query, *host;
	size_t method_len, target_len, path_len, query_len, host_len;
	/* path and query: the target's, split at the first '?' (an absolute-form target's path and
	 * query, path "/" (a static string) when it has none; host is then the target's authority,
	 * as the front takes it); query NULL without '?'. host is as received (NULL when HTTP/1.0
	 * sends none): the front gives PHP its ASCII-lowercased form (fasthttp's URI lowercases
	 * it) and, for an absolute-form target, the authority as the Host field, case kept. */
	int minor;                 /* HTTP/1.minor: 0 or 1 */
	ferry_http_field *fields;  /* the caller's slots, in the order received */
	size_t field_count, field_slots;
	/* content_length and chunked are set on refusals after the fields were read too (the
	 * front reads up to min(length, max_body, 8 KiB) of a body before it judges the head) */
	int64_t content_length;    /* -1: none */
	bool chunked;              /* Transfer-Encoding: chunked (then content_length is -1) */
	/* as fasthttp reads Connection: the last field decides, and only the exact value "close"
	 * closes; HTTP/1.0 stays open when the first other Connection field lists keep-alive */
	bool keep_alive;
	bool expect_continue;      /* the first Expect field is exactly "100-continue" (on HTTP/1.1) */
	const char *error;         /* a refusal's reason, a static string for the log and the 4xx body */
} ferry_http_request;

/*
 * OPTIONS * (path "*") asks about the server: the front answers it itself, 200 with an empty
 * body, after reading the body off the connection (and closes when that body is broken or
 * larger than max_body; no 413 is returned for it here).
 *
 * Parses the head at buf[0 .. len). r->fields and r->field_slots are set by the caller (the
 * head has too many fields when they run out: FERRY_HTTP_HEADERS_TOO_LARGE). Leading empty
 * lines before a request line are skipped, as RFC 9112 §2.2 allows.
 */
ferry_http_status ferry_http_parse_head(const char *buf, size_t len, const ferry_http_limits *limits,
	ferry_http_request *r, size_t *consumed);

/* A chunked body's decoding state, zeroed before the first call. */
typedef struct {
	int state;
	uint64_t size;      /* bytes left in the current chunk */
	uint64_t total;     /* body bytes decoded so far */
	size_t line;        /* hex digits of the current size so far */
	/* the trailer section may be at most this long (the front's read buffer: server.max_header_size);
	 * 0 means 1 MiB. Set by the caller after zeroing. */
	size_t max_trailer;
} ferry_http_chunked;

/*
 * Decodes in place: the chunk data in buf[0 .. len) are moved to the front of buf.
 * *consumed is how many input bytes were used (the rest belong to the next request, or
 * are the start of a line not yet whole), *produced how many body bytes are now at buf[0..).
 * Returns FERRY_HTTP_OK once the last chunk and its trailer section are read (trailer
 * fields are checked and dropped, as the front drops them), FERRY_HTTP_NEED_MORE before that,
 * or a refusal (400; 413 when total would pass max_body, 0 meaning no limit).
 */
ferry_http_status ferry_http_chunked_decode(ferry_http_chunked *c, char *buf, size_t len, uint64_t max_body,
	size_t *consumed, size_t *produced);

/* Whether the last chunk has been read and its trailer section is what is awaited. */
bool ferry_http_chunked_in_trailer(const ferry_http_chunked *c);

#endif
