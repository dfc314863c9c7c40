/*
 * An answer's context (docs/protocol.md, "HTTP response": JSON from Response::context())
 * and body as HTTP/1.1 bytes, in the form the Go front writes them (fasthttp: Server,
 * Date, Content-Type, Content-Length, the other fields in order, Connection: close last),
 * with the front's one check on every field (internal/protocol.CheckHeader): a name that is
 * not a token, or a value holding CR, LF or NUL, makes the answer a 502.
 *
 * Past 400 lines: the head's fields (checked, and placed where the front places them) and
 * the body's framing (a length, chunked parts, close-delimited, a file) are one writer.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "php.h"
#include "ext/standard/base64.h"
#include "zend_smart_str.h"
#include "ferry_direct_int.h"

/* ---- the head ---- */

static bool token_char(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool valid_name(const char *s, size_t len)
{
	if (len == 0) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		if (!token_char((unsigned char) s[i])) {
			return false;
		}
	}
	return true;
}

static bool valid_value(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\r' || s[i] == '\n' || s[i] == '\0') {
			return false;
		}
	}
	return true;
}

static bool name_is(const smart_str *n, const char *lower, size_t len)
{
	return ZSTR_LEN(n->s) == len && zend_binary_strcasecmp(ZSTR_VAL(n->s), len, lower, len) == 0;
}

static const char *reason_phrase(zend_long status)
{
	switch (status) {
		case 100: return "Continue";
		case 101: return "Switching Protocols";
		case 103: return "Early Hints";
		case 200: return "OK";
		case 201: return "Created";
		case 202: return "Accepted";
		case 204: return "No Content";
		case 206: return "Partial Content";
		case 301: return "Moved Permanently";
		case 302: return "Found";
		case 303: return "See Other";
		case 304: return "Not Modified";
		case 307: return "Temporary Redirect";
		case 308: return "Permanent Redirect";
		case 400: return "Bad Request";
		case 401: return "Unauthorized";
		case 403: return "Forbidden";
		case 404: return "Not Found";
		case 405: return "Method Not Allowed";
		case 408: return "Request Timeout";
		case 409: return "Conflict";
		case 410: return "Gone";
		case 413: return "Request Entity Too Large";
		case 414: return "Request URI Too Long";
		case 415: return "Unsupported Media Type";
		case 422: return "Unprocessable Entity";
		case 429: return "Too Many Requests";
		case 431: return "Request Header Fields Too Large";
		case 500: return "Internal Server Error";
		case 501: return "Not Implemented";
		case 502: return "Bad Gateway";
		case 503: return "Service Unavailable";
		case 504: return "Gateway Timeout";
		case 505: return "HTTP Version Not Supported";
		default: return "Unknown Status Code";
	}
}

/* The Date field, formatted once a second. */
static void append_date(smart_str *out)
{
	static time_t cached_at;
	static char cached[40];
	time_t now = time(NULL);
	if (now != cached_at) {
		struct tm tm;
		gmtime_r(&now, &tm);
		strftime(cached, sizeof(cached), "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm);
		cached_at = now;
	}
	smart_str_appends(out, cached);
}

typedef struct {
	zend_long status;
	smart_str reason;
	smart_str fields;   /* the other fields, each "Name: value\r\n", checked */
	smart_str type;     /* Content-Type's value, the last one given */
	smart_str server;   /* Server's, when the answer names one */
	bool close;         /* Connection: close */
	bool file;          /* a "file" key: the body is a part of that file */
	smart_str file_path;
	zend_long file_offset, file_length; /* length -1: to the end */
	bool file_delete;
} answer_head;

/* One field of the context: checked, and kept where the front would put it. */
static bool add_field(answer_head *h, const smart_str *name, const char *value, size_t len)
{
	if (!valid_name(ZSTR_VAL(name->s), ZSTR_LEN(name->s)) || !valid_value(value, len)) {
		return false;
	}
	if (ferry_dlog_drops(ZSTR_VAL(name->s), ZSTR_LEN(name->s))) {
		return true; /* the request's id is echoed instead, as the front sets it over the handler's */
	}
	if (name_is(name, "content-length", 14) || name_is(name, "transfer-encoding", 17) || name_is(name, "date", 4)) {
		return true; /* the server frames the body and dates the answer itself */
	}
	if (name_is(name, "content-type", 12)) {
		if (h->type.s) {
			ZSTR_LEN(h->type.s) = 0;
		}
		smart_str_appendl(&h->type, value, len);
		return true;
	}
	if (name_is(name, "server", 6)) {
		if (h->server.s) {
			ZSTR_LEN(h->server.s) = 0;
		}
		smart_str_appendl(&h->server, value, len);
		return true;
	}
	if (name_is(name, "connection", 10)) {
		h->close = h->close || (len == 5 && zend_binary_strcasecmp(value, 5, "close", 5) == 0);
		return true;
	}
	smart_str_append(&h->fields, name->s);
	smart_str_appendl(&h->fields, ": ", 2);
	smart_str_appendl(&h->fields, value, len);
	smart_str_appendl(&h->fields, "\r\n", 2);
	return true;
}

/* "headers" or "raw_headers" (base64 values): {"Name":["v",...],...} */
static bool read_fields(ferry_json *j, answer_head *h, bool raw)
{
	smart_str name = {0}, value = {0};
	bool ok = ferry_json_lit(j, '{');
	if (ok && !ferry_json_lit(j, '}')) {
		do {
			if (!(ok = ferry_json_str(j, &name) && ferry_json_lit(j, ':') && ferry_json_lit(j, '['))) {
				break;
			}
			if (ferry_json_lit(j, ']')) {
				continue;
			}
			do {
				if (!(ok = ferry_json_str(j, &value))) {
					break;
				}
				const char *v = value.s ? ZSTR_VAL(value.s) : "";
				size_t len = value.s ? ZSTR_LEN(value.s) : 0;
				if (raw) {
					zend_string *bytes = php_base64_decode_ex((const unsigned char *) v, len, true);
					ok = bytes && add_field(h, &name, ZSTR_VAL(bytes), ZSTR_LEN(bytes));
					if (bytes) {
						zend_string_release(bytes);
					}
				} else {
					ok = add_field(h, &name, v, len);
				}
			} while (ok && ferry_json_lit(j, ','));
			ok = ok && ferry_json_lit(j, ']');
		} while (ok && ferry_json_lit(j, ','));
		ok = ok && ferry_json_lit(j, '}');
	}
	smart_str_free(&name);
	smart_str_free(&value);
	return ok;
}


/* "file":{"path":"/abs","offset":0,"length":26,"delete":false} (docs/protocol.md) */
static bool read_file(ferry_json *j, answer_head *h)
{
	smart_str key = {0};
	h->file = true;
	h->file_length = -1;
	bool ok = ferry_json_lit(j, '{');
	if (ok && !ferry_json_lit(j, '}')) {
		do {
			if (!(ok = ferry_json_str(j, &key) && ferry_json_lit(j, ':'))) {
				break;
			}
			if (name_is(&key, "path", 4)) {
				ok = ferry_json_str(j, &h->file_path);
			} else if (name_is(&key, "offset", 6)) {
				ok = ferry_json_integer(j, &h->file_offset);
			} else if (name_is(&key, "length", 6)) {
				ok = ferry_json_integer(j, &h->file_length);
			} else if (name_is(&key, "delete", 6)) {
				ok = ferry_json_boolean(j, &h->file_delete);
			} else {
				ok = ferry_json_skip(j, 0);
			}
		} while (ok && ferry_json_lit(j, ','));
		ok = ok && ferry_json_lit(j, '}');
	}
	smart_str_free(&key);
	return ok && h->file_path.s != NULL;
}

static bool read_head(const char *context, size_t len, answer_head *h)
{
	ferry_json j = {context, context + len};
	smart_str key = {0};
	bool ok = ferry_json_lit(&j, '{');
	if (ok && !ferry_json_lit(&j, '}')) {
		do {
			if (!(ok = ferry_json_str(&j, &key) && ferry_json_lit(&j, ':'))) {
				break;
			}
			if (name_is(&key, "status", 6)) {
				ok = ferry_json_integer(&j, &h->status);
			} else if (name_is(&key, "headers", 7)) {
				ok = read_fields(&j, h, false);
			} else if (name_is(&key, "raw_headers", 11)) {
				ok = read_fields(&j, h, true);
			} else if (name_is(&key, "reason", 6)) {
				ok = ferry_json_str(&j, &h->reason) && (!h->reason.s || valid_value(ZSTR_VAL(h->reason.s), ZSTR_LEN(h->reason.s)));
			} else if (name_is(&key, "file", 4)) {
				ok = read_file(&j, h);
			} else {
				ok = ferry_json_skip(&j, 0);
			}
		} while (ok && ferry_json_lit(&j, ','));
		ok = ok && ferry_json_lit(&j, '}');
	}
	ferry_json_ws(&j);
	smart_str_free(&key);
	return ok && j.p == j.end && h->status >= 100 && h->status <= 999;
}

static void head_free(answer_head *h)
{
	smart_str_free(&h->reason);
	smart_str_free(&h->fields);
	smart_str_free(&h->type);
	smart_str_free(&h->server);
	smart_str_free(&h->file_path);
}

/* framing: the body's length; -1 chunked; -2 until the connection closes; -3 none (1xx) */
static void write_head(direct_conn *c, answer_head *h, int64_t framing)
{
	smart_str *out = &c->out;
	smart_str_appendl(out, "HTTP/1.1 ", 9);
	smart_str_append_long(out, h->status);
	smart_str_appendc(out, ' ');
	if (h->reason.s && ZSTR_LEN(h->reason.s) > 0) {
		smart_str_append(out, h->reason.s);
	} else {
		smart_str_appends(out, reason_phrase(h->status));
	}
	smart_str_appendl(out, "\r\n", 2);
	if (framing == -3) {
		if (h->fields.s) {
			smart_str_append(out, h->fields.s);
		}
		smart_str_appendl(out, "\r\n", 2);
		return;
	}
	ferry_dlog_answered(c, (int) h->status, framing);
	smart_str_appendl(out, "Server: ", 8);
	if (h->server.s) {
		smart_str_append(out, h->server.s);
	} else {
		smart_str_appendl(out, "ferry", 5);
	}
	smart_str_appendl(out, "\r\n", 2);
	append_date(out);
	bool bodyless = h->status == 204 || h->status == 304;
	if (h->type.s) {
		smart_str_appendl(out, "Content-Type: ", 14);
		smart_str_append(out, h->type.s);
		smart_str_appendl(out, "\r\n", 2);
	} else if (!bodyless) {
		smart_str_appendl(out, "Content-Type: text/plain; charset=utf-8\r\n", 41);
	}
	if (framing >= 0 && !bodyless) {
		smart_str_appendl(out, "Content-Length: ", 16);
		smart_str_append_unsigned(out, (zend_ulong) framing);
		smart_str_appendl(out, "\r\n", 2);
	} else if (framing == -1) {
		smart_str_appendl(out, "Transfer-Encoding: chunked\r\n", 28);
	}
	if (h->fields.s) {
		smart_str_append(out, h->fields.s);
	}
	if (h->close || framing == -2) {
		c->close_after = true;
	}
	ferry_dlog_echo(out, c); /* the front's echo of X-Request-Id */
	if (c->close_after) {
		smart_str_appendl(out, "Connection: close\r\n", 19);
	}
	smart_str_appendl(out, "\r\n", 2);
}

static void append_chunk(smart_str *out, const char *body, size_t len)
{
	if (len == 0) {
		return; /* an empty chunk would end the body */
	}
	char size[20];
	int n = snprintf(size, sizeof(size), "%zx\r\n", len);
	smart_str_appendl(out, size, (size_t) n);
	smart_str_appendl(out, body, len);
	smart_str_appendl(out, "\r\n", 2);
}

/*
 * A file answer: the head, then the file's bytes by sendfile() when the connection writes
 * (ferry_direct.c). As the front does: an absolute path, opened (then unlinked with
 * "delete"), a regular file, the range within its size.
 */
static bool send_file(direct_conn *c, answer_head *h)
{
	const char *path = ZSTR_VAL(h->file_path.s);
	if (path[0] != '/' || strlen(path) != ZSTR_LEN(h->file_path.s) || c->file_fd >= 0) {
		/* the front's log line, at warn (a PSR-3 head the server reads) */
		fprintf(stderr, "[warning] answer file \"%s\" is not an absolute path\n", path);
		return false;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && h->file_delete) {
		unlink(path);
	}
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "[warning] answer file \"%s\": %s\n", path, fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0) {
			close(fd);
		}
		return false;
	}
	zend_long size = (zend_long) st.st_size;
	zend_long n = h->file_length >= 0 ? h->file_length : size - h->file_offset;
	if (h->file_offset < 0 || n < 0 || h->file_offset > size || n > size - h->file_offset) {
		fprintf(stderr, "[warning] answer file \"%s\": bytes %ld+%ld are past its size %ld\n", path,
			(long) h->file_offset, (long) n, (long) size);
		close(fd);
		return false;
	}
	write_head(c, h, (int64_t) n);
	if (c->head_request || n == 0) {
		close(fd);
		return true;
	}
	c->file_fd = fd;
	c->file_off = (off_t) h->file_offset;
	c->file_left = (uint64_t) n;
	return true;
}

void ferry_direct_empty(direct_conn *c, int status)
{
	answer_head h = {0};
	h.status = status;
	write_head(c, &h, 0);
	head_free(&h);
}

void ferry_direct_fail(direct_conn *c, int status, const char *message)
{
	ferry_direct_ttl_disarm(c); /* its answer is under way: no 504 may follow */
	answer_head h = {0};
	h.status = status;
	smart_str_appends(&h.type, "text/plain; charset=utf-8");
	smart_str_appends(&h.fields, "X-Content-Type-Options: nosniff\r\n");
	size_t len = strlen(message);
	write_head(c, &h, (int64_t) len + 1);
	if (!c->head_request) {
		smart_str_appendl(&c->out, message, len);
		smart_str_appendc(&c->out, '\n');
	}
	head_free(&h);
}

bool ferry_direct_answer(direct_conn *c, const char *context, size_t context_len, const char *body, size_t body_len,
	bool stream, bool error)
{
	ferry_direct_ttl_disarm(c); /* its answer is under way: no 504 may follow */
	if (stream) {
		ferry_direct_ttl_progress(c);
	}
	if (error) {
		/* an ERROR answer: the job failed in PHP, and its message is for the log, not the client */
		if (c->stream == STREAM_NONE) {
			ferry_direct_fail(c, 500, "internal server error");
		} else {
			c->close_after = true; /* cut short: no last chunk */
		}
		c->stream = STREAM_NONE;
		return true;
	}
	if (c->stream != STREAM_NONE) {
		/* a later part, or the ending frame: context_len is 0 */
		if (!c->head_request) {
			if (c->stream == STREAM_CHUNKED) {
				append_chunk(&c->out, body, body_len);
			} else {
				smart_str_appendl(&c->out, body, body_len);
			}
		}
		if (!stream) {
			if (c->stream == STREAM_CHUNKED && !c->head_request) {
				smart_str_appendl(&c->out, "0\r\n\r\n", 5);
			}
			c->stream = STREAM_NONE;
		}
		return true;
	}
	answer_head h = {0};
	bool ok = read_head(context, context_len, &h) && !(h.file && (stream || body_len > 0)) && h.status != 101;
	if (ok && h.file) {
		bool sent = send_file(c, &h);
		head_free(&h);
		if (!sent) {
			/* the front's answer to a file it cannot open or read from */
			ferry_direct_fail(c, 502, "the worker sent an invalid response");
		}
		return true;
	}
	if (!ok) {
		head_free(&h);
		return false;
	}
	if (h.status < 200) {
		/* informational (103): ahead of the final answer, on HTTP/1.1 only */
		if (!c->http10) {
			write_head(c, &h, -3);
		}
		head_free(&h);
		return true;
	}
	if (stream) {
		c->stream = c->http10 ? STREAM_EOF : STREAM_CHUNKED;
		write_head(c, &h, c->http10 ? -2 : -1);
		if (!c->head_request) {
			if (c->stream == STREAM_CHUNKED) {
				append_chunk(&c->out, body, body_len);
			} else {
				smart_str_appendl(&c->out, body, body_len);
			}
		}
	} else {
		write_head(c, &h, (int64_t) body_len);
		if (!c->head_request && h.status != 204 && h.status != 304) {
			smart_str_appendl(&c->out, body, body_len);
		}
	}
	head_free(&h);
	return true;
}

/*
 * Ferry\Ext\direct_answer_bytes(string $context, string $body, bool $head = false,
 * bool $http10 = false): ?string, for tests: the bytes a direct-mode client gets for an
 * answer frame's context and body (its Date field as the server writes it), null for a
 * context the front would refuse with a 502.
 */
ZEND_FUNCTION(ferry_direct_answer_bytes)
{
	zend_string *context, *body;
	bool head = false, http10 = false;

	ZEND_PARSE_PARAMETERS_START(2, 4)
		Z_PARAM_STR(context)
		Z_PARAM_STR(body)
		Z_PARAM_OPTIONAL
		Z_PARAM_BOOL(head)
		Z_PARAM_BOOL(http10)
	ZEND_PARSE_PARAMETERS_END();

	direct_conn c = {0};
	c.fd = -1;
	c.file_fd = -1;
	c.head_request = head;
	c.http10 = http10;
	bool ok = ferry_direct_answer(&c, ZSTR_VAL(context), ZSTR_LEN(context), ZSTR_VAL(body), ZSTR_LEN(body), false, false);
	if (c.file_fd >= 0) {
		close(c.file_fd);
	}
	if (!ok) {
		smart_str_free(&c.out);
		RETURN_NULL();
	}
	smart_str_0(&c.out);
	RETURN_STR(c.out.s ? c.out.s : ZSTR_EMPTY_ALLOC());
}
