/*
 * Direct mode's request ids and access log (ferry_direct_log.h): the id is taken or made as
 * internal/observe/reqid.go does, and each answered request's line goes to a buffer that is
 * written to the server's FIFO once it holds ~3.5 KiB or its oldest line is 100 ms old (the
 * event loop wakes for it), and when the worker exits.
 *
 * Every write is whole lines and at most PIPE_BUF bytes, which a pipe writes in one piece
 * however many workers write to it at once; the FIFO is non-blocking, so a server that does
 * not read in time costs the lines of that write (counted, and said on stderr), never the
 * serving of a request.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <unistd.h>

#include "php.h"
#include "ferry_direct.h"
#include "ferry_direct_int.h"
#include "ferry_direct_log_int.h"

#define FLUSH_AT 3584
/*
 * The longest a line waits in the buffer. Written whenever the loop would wait, lines would
 * cost a write, and the server a wake-up, per request or two: under load that took a fifth
 * of the throughput. Written at ~3.5 KiB or after this long, a dozen lines share one.
 */
#define FLUSH_AFTER_MS 100
#define DROP_WARN_EVERY 10 /* seconds between two warnings of lines dropped */

static struct {
	bool ids, on, json;
	int fd;
	char prefix[17]; /* 16 hex digits and a dash, drawn in this worker (never in a zygote: forks would share it) */
	uint64_t n;
	char buf[LINE_MAX_BYTES];
	size_t len;
	uint64_t first; /* monotonic ns: when the oldest line in buf was put there */
	uint64_t dropped;
	time_t warned_at;
	long pid; /* getpid() is a system call each time: it was 1.4% of a worker's time under load */
} S = {.fd = -1};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

bool ferry_request_id_valid(const char *s, size_t len)
{
	if (len == 0 || len > FERRY_REQUEST_ID_MAX) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
			|| c == '.' || c == ':' || c == '/' || c == '+' || c == '=' || c == '@')) {
			return false;
		}
	}
	return true;
}

bool ferry_dlog_setup(HashTable *h)
{
	zval *ids = zend_hash_str_find(h, "request_id", sizeof("request_id") - 1);
	S.ids = ids && Z_TYPE_P(ids) == IS_LONG && Z_LVAL_P(ids) != 0;
	if (S.ids) {
		unsigned char raw[8];
		if (getrandom(raw, sizeof(raw), 0) != (ssize_t) sizeof(raw)) {
			zend_throw_error(NULL, "Ferry\\Ext\\direct_serve(): no randomness for request ids: %s", strerror(errno));
			return false;
		}
		static const char hex[] = "0123456789abcdef";
		for (size_t i = 0; i < sizeof(raw); i++) {
			S.prefix[2 * i] = hex[raw[i] >> 4];
			S.prefix[2 * i + 1] = hex[raw[i] & 15];
		}
		S.prefix[16] = '-';
	}
	zval *al = zend_hash_str_find(h, "access_log", sizeof("access_log") - 1);
	if (!al || Z_TYPE_P(al) != IS_ARRAY) {
		return true;
	}
	zval *fifo = zend_hash_str_find(Z_ARRVAL_P(al), "fifo", sizeof("fifo") - 1);
	zval *format = zend_hash_str_find(Z_ARRVAL_P(al), "format", sizeof("format") - 1);
	if (!fifo || Z_TYPE_P(fifo) != IS_STRING || Z_STRLEN_P(fifo) == 0) {
		return true;
	}
	S.fd = open(Z_STRVAL_P(fifo), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (S.fd < 0) {
		zend_throw_error(NULL, "Ferry\\Ext\\direct_serve(): the access log's pipe %s: %s", Z_STRVAL_P(fifo), strerror(errno));
		return false;
	}
	S.on = true;
	S.pid = (long) getpid();
	S.json = !(format && Z_TYPE_P(format) == IS_STRING && zend_string_equals_literal(Z_STR_P(format), "combined"));
	return true;
}

static bool is_name(const ferry_http_field *f, const char *lower, size_t len)
{
	return f->name_len == len && zend_binary_strcasecmp(f->name, len, lower, len) == 0;
}

/* The front's requestID(): the client's first X-Request-Id when valid, else a new one in its place. */
static void take_id(ferry_dlog_req *q, ferry_http_request *r)
{
	ferry_http_field *given = NULL;
	for (size_t i = 0; i < r->field_count; i++) {
		if (is_name(&r->fields[i], "x-request-id", 12)) {
			given = &r->fields[i];
			break;
		}
	}
	if (given && ferry_request_id_valid(given->value, given->value_len)) {
		memcpy(q->id, given->value, given->value_len);
		q->id_len = (uint8_t) given->value_len;
		return;
	}
	memcpy(q->id, S.prefix, sizeof(S.prefix));
	/* strconv.AppendUint(n, 36) */
	char digits[16];
	size_t d = 0;
	uint64_t n = ++S.n;
	do {
		digits[d++] = "0123456789abcdefghijklmnopqrstuvwxyz"[n % 36];
		n /= 36;
	} while (n);
	size_t len = sizeof(S.prefix);
	while (d) {
		q->id[len++] = digits[--d];
	}
	q->id_len = (uint8_t) len;
	if (!given) {
		given = &r->fields[r->field_count++]; /* the caller's spare slot */
	}
	given->name = "X-Request-Id";
	given->name_len = 12;
	given->value = q->id;
	given->value_len = q->id_len;
}

void ferry_dlog_begin(direct_conn *c, ferry_http_request *r)
{
	ferry_dlog_req *q = &c->log;
	if (!S.ids && !S.on) {
		return;
	}
	q->open = true;
	q->php = false;
	q->status = 0;
	q->bytes = 0;
	q->run = 0;
	q->id_len = 0;
	clock_gettime(CLOCK_REALTIME, &q->start);
	q->t0 = mono_ns();
	if (S.ids) {
		take_id(q, r);
	}
	if (!S.on) {
		return;
	}
	ferry_dlog_text t = {.start = q->start, .id = q->id, .id_len = q->id_len, .method = r->method,
		.method_len = r->method_len, .uri = r->target, .uri_len = r->target_len,
		.proto = r->minor == 0 ? "HTTP/1.0" : "HTTP/1.1", .proto_len = 8};
	char origin[FIELD_URI + 2];
	const char *end = r->target + r->target_len;
	if (r->target_len > 0 && r->target[0] != '/' && !(r->target_len == 1 && r->target[0] == '*')) {
		/* an absolute-form target: fasthttp's RequestURI() is its path and query */
		if (r->path >= r->target && r->path < end) {
			t.uri = r->path;
			t.uri_len = (size_t) (end - r->path);
		} else {
			size_t n = 1, ql = r->query ? MIN(r->query_len, sizeof(origin) - 2) : 0;
			origin[0] = '/';
			if (r->query) {
				origin[n++] = '?';
				memcpy(origin + n, r->query, ql);
				n += ql;
			}
			t.uri = origin;
			t.uri_len = n;
		}
	}
	/* RemoteIP(): the peer's address without its port (and an IPv6 one's brackets) */
	const char *remote = c->remote;
	size_t rlen = strlen(remote);
	if (remote[0] == '[') {
		const char *end = memchr(remote, ']', rlen);
		t.remote = remote + 1;
		t.remote_len = end ? (size_t) (end - remote - 1) : rlen - 1;
	} else {
		const char *colon = strrchr(remote, ':');
		t.remote = remote;
		t.remote_len = colon ? (size_t) (colon - remote) : rlen;
	}
	/* as fasthttp reads them: the first Referer, the last User-Agent */
	for (size_t i = 0; i < r->field_count; i++) {
		const ferry_http_field *f = &r->fields[i];
		if (!t.referer && is_name(f, "referer", 7)) {
			t.referer = f->value;
			t.referer_len = f->value_len;
		} else if (is_name(f, "user-agent", 10)) {
			t.ua = f->value;
			t.ua_len = f->value_len;
		}
	}
	if (q->fields.s) {
		ZSTR_LEN(q->fields.s) = 0;
	}
	ferry_dlog_fields(&q->fields, &q->split, S.json, &t);
}

void ferry_dlog_run(direct_conn *c, bool ran)
{
	if (c->log.open) {
		if (ran) {
			c->log.run = mono_ns();
		}
		c->log.php = ran;
	}
}

void ferry_dlog_answered(direct_conn *c, int status, int64_t length)
{
	if (c->log.open) {
		c->log.status = status;
		c->log.bytes = c->head_request || length < 0 ? 0 : length;
	}
}

void ferry_dlog_echo(smart_str *out, const direct_conn *c)
{
	if (c->log.open && c->log.id_len > 0) {
		smart_str_appendl(out, "X-Request-Id: ", 14);
		smart_str_appendl(out, c->log.id, c->log.id_len);
		smart_str_appendl(out, "\r\n", 2);
	}
}

bool ferry_dlog_drops(const char *name, size_t len)
{
	return S.ids && len == 12 && zend_binary_strcasecmp(name, len, "x-request-id", 12) == 0;
}

void ferry_dlog_finish(direct_conn *c)
{
	ferry_dlog_req *q = &c->log;
	if (!q->open) {
		return;
	}
	q->open = false;
	if (!S.on || !q->fields.s) {
		return;
	}
	uint64_t now = mono_ns();
	ferry_dlog_end e = {
		/* no answer went out: the client left while PHP ran (nginx's 499; the front would log PHP's status) */
		.status = q->status ? q->status : 499,
		.bytes = q->bytes,
		.duration = now - q->t0,
		.wait = q->php ? q->run - q->t0 : 0,
		.php = q->php ? now - q->run : 0,
		.pid = q->php ? S.pid : 0,
	};
	char line[LINE_MAX_BYTES];
	size_t n = ferry_dlog_line(line, sizeof(line), S.json, ZSTR_VAL(q->fields.s), ZSTR_LEN(q->fields.s), q->split, &e);
	if (n == 0) {
		S.dropped++; /* cannot happen within the fields' bounds: never a cut line */
		return;
	}
	if (S.len + n > sizeof(S.buf)) {
		ferry_dlog_flush();
	}
	if (S.len == 0) {
		S.first = mono_ns();
	}
	memcpy(S.buf + S.len, line, n);
	S.len += n;
	if (S.len >= FLUSH_AT) {
		ferry_dlog_flush();
	}
}

void ferry_dlog_free(direct_conn *c)
{
	smart_str_free(&c->log.fields);
}

void ferry_dlog_flush(void)
{
	if (S.len == 0 || S.fd < 0) {
		return;
	}
	ssize_t w;
	do {
		w = write(S.fd, S.buf, S.len);
	} while (w < 0 && errno == EINTR);
	if (w != (ssize_t) S.len) {
		/* EAGAIN: the pipe is full (a write of at most PIPE_BUF is whole or nothing); EPIPE: no server */
		for (size_t i = 0; i < S.len; i++) {
			S.dropped += S.buf[i] == '\n';
		}
		if (D.stats) {
			D.stats->log_dropped = S.dropped; /* the server's ferry_direct_access_log_dropped_total */
		}
		time_t now = time(NULL);
		if (now - S.warned_at >= DROP_WARN_EVERY) {
			S.warned_at = now;
			fprintf(stderr, "[warning] access log: %llu lines dropped so far: the server did not read them in time (%s)\n",
				(unsigned long long) S.dropped, w < 0 ? strerror(errno) : "short write");
		}
	}
	S.len = 0;
}

int ferry_dlog_wait(int epfd, void *events, int max, int timeout)
{
	if (S.len > 0) {
		uint64_t age_ms = (mono_ns() - S.first) / 1000000;
		if (age_ms >= FLUSH_AFTER_MS) {
			ferry_dlog_flush();
		} else if (timeout < 0 || (uint64_t) timeout > FLUSH_AFTER_MS - age_ms) {
			timeout = (int) (FLUSH_AFTER_MS - age_ms); /* woken to write them, should nothing else come */
		}
	}
	return epoll_wait(epfd, events, max, timeout);
}

uint64_t ferry_dlog_due(void)
{
	if (S.len > 0 && (mono_ns() - S.first) / 1000000 >= FLUSH_AFTER_MS) {
		ferry_dlog_flush();
	}
	return S.len > 0 ? S.first / 1000000 + FLUSH_AFTER_MS : 0;
}
