/*
 * Direct mode's HTTP/1.1 request head parser (ferry_http.h). Its verdicts are the Go front's,
 * which is fasthttp's parser (header.go) followed by internal/gateway/check.go: where the two
 * differ from the RFC, this follows them, and the comments name the fasthttp behaviour kept.
 * One pass over the head; the special fields are handled as their line ends.
 */
#include <string.h>

#include "ferry_http.h"
#include "ferry_http_int.h"

#define FH_DEFAULT_MAX_HEAD ((size_t)1 << 20)

/* What the special fields leave, as fasthttp's parseHeaders and check.go's scanRawHeaders count it. */
typedef struct {
	const char *error;
	size_t lines, hosts, lengths, encodings;
	size_t host_field;
	bool cl_seen, chunked, close, folded;
	const char *conn; /* the first Connection value other than "close" */
	size_t conn_len;
	int expect; /* 0: no Expect yet, 1: the first is 100-continue, -1: it is not */
	int64_t cl;
} head_state;

/* A value as fasthttp compares it: a folded one unfolded into tmp. The front refuses folds,
 * but only after fasthttp has judged the unfolded values (a bad Content-Length is its 400,
 * before the front's 505); a special field folded past tmp is compared cut short. */
static const char *special_value(const ferry_http_field *f, bool folded, char *tmp, size_t cap, size_t *len)
{
	if (!folded) {
		*len = f->value_len;
		return f->value;
	}
	size_t n = f->value_len < cap ? f->value_len : cap;
	memcpy(tmp, f->value, n);
	*len = ferry_http_unfold(tmp, n);
	return tmp;
}

static void special_field(head_state *st, const ferry_http_field *f, size_t index, bool folded)
{
	char tmp[256];
	size_t vlen;
	const char *v;
	switch (f->name_len) {
	case 4:
		if (ferry_http_eq_fold(f->name, 4, "host", 4)) {
			st->hosts++;
			st->host_field = index;
		}
		break;
	case 6:
		if (!st->expect && ferry_http_eq_fold(f->name, 6, "expect", 6)) {
			v = special_value(f, folded, tmp, sizeof tmp, &vlen);
			st->expect = vlen == 12 && memcmp(v, "100-continue", 12) == 0 ? 1 : -1;
		}
		break;
	case 7:
		if (ferry_http_eq_fold(f->name, 7, "trailer", 7)) {
			v = special_value(f, folded, tmp, sizeof tmp, &vlen);
			if (!ferry_http_trailer_list_ok(v, vlen) && !st->error) {
				st->error = "forbidden field named in Trailer";
			}
		}
		break;
	case 10:
		if (ferry_http_eq_fold(f->name, 10, "connection", 10)) {
			v = special_value(f, folded, tmp, sizeof tmp, &vlen);
			/* fasthttp: exactly "close" closes; any other value reopens */
			st->close = vlen == 5 && memcmp(v, "close", 5) == 0;
			if (!st->close && !st->conn) {
				st->conn = folded ? "" : f->value;
				st->conn_len = folded ? 0 : f->value_len;
				if (folded && ferry_http_has_keep_alive(v, vlen)) {
					st->conn = "keep-alive", st->conn_len = 10;
				}
			}
		}
		break;
	case 14:
		if (ferry_http_eq_fold(f->name, 14, "content-length", 14)) {
			st->lengths++;
			if (st->cl_seen) {
				if (!st->error) {
					st->error = "duplicate Content-Length header";
				}
				break;
			}
			st->cl_seen = true;
			if (st->chunked) {
				break; /* fasthttp parses no length after chunked; check.go refuses the pair */
			}
			v = special_value(f, folded, tmp, sizeof tmp, &vlen);
			int64_t n = 0;
			bool ok = vlen > 0;
			for (size_t i = 0; ok && i < vlen; i++) {
				int d = v[i] - '0';
				if ((ok = d >= 0 && d <= 9 && n <= (INT64_MAX - d) / 10)) {
					n = n * 10 + d;
				}
			}
			if (!ok && !st->error) {
				st->error = "invalid Content-Length";
			}
			st->cl = ok ? n : -1;
		}
		break;
	case 17:
		if (ferry_http_eq_fold(f->name, 17, "transfer-encoding", 17)) {
			st->encodings++;
			v = special_value(f, folded, tmp, sizeof tmp, &vlen);
			if (ferry_http_eq_fold(v, vlen, "chunked", 7)) {
				st->chunked = true;
			} else if (!ferry_http_eq_fold(v, vlen, "identity", 8) && !st->error) {
				st->error = "unsupported Transfer-Encoding";
			}
		}
		break;
	}
}

static ferry_http_status refuse(ferry_http_request *r, ferry_http_status s, const char *why)
{
	r->error = why;
	return s;
}

/* The line at b[p..) has no LF within the window: more bytes may finish it, unless the window
 * is the whole of max_head (fasthttp's read buffer is full: ErrSmallBuffer, 431). */
#define INCOMPLETE() \
	return len >= max_head ? refuse(r, FERRY_HTTP_HEADERS_TOO_LARGE, "request headers larger than max_header_size") \
			       : FERRY_HTTP_NEED_MORE

/* Ends the field whose last line ends (before its LF) at b[end): trims and checks its value,
 * then applies what fasthttp does with the special fields. */
static void end_field(head_state *st, ferry_http_request *r, const unsigned char *b, size_t name, size_t name_len,
	size_t vstart, size_t end, size_t first_bad, bool folded, bool no_colon_after)
{
	if (end > vstart && b[end - 1] == '\r') {
		end--;
	}
	size_t untrimmed = end;
	while (end > vstart && (b[end - 1] == ' ' || b[end - 1] == '\t')) {
		end--;
	}
	if (!st->error && (folded ? !ferry_http_folded_value_ok(b + vstart, end - vstart) : first_bad < end)) {
		st->error = "invalid header value";
	}
	if (!st->error && folded && end < untrimmed && !no_colon_after) {
		/* fasthttp, unfolding, takes the blanks it trimmed off the last line for the start
		 * of the next field, whose name runs to the next colon over a line end: the front
		 * answers 400. (With no colon in what it has buffered, it waits for one instead, and
		 * the fold is refused below, with check.go's precedence.) */
		st->error = "invalid header field name";
	}
	/* a field past the caller's slots makes the head a 431, unless a 400 comes first: its
	 * special meaning is still applied */
	ferry_http_field spare, *f = st->lines - 1 < r->field_slots ? &r->fields[st->lines - 1] : &spare;
	f->name = (const char *)b + name, f->name_len = name_len;
	f->value = (const char *)b + vstart, f->value_len = end - vstart;
	if (!st->error) {
		special_field(st, f, st->lines - 1, folded);
	}
	st->folded |= folded;
}

static const char *const slash = "/";

/* check.go's checkRequest and settleTarget, in their order, on a head fasthttp has accepted. */
static ferry_http_status settle(ferry_http_request *r, const head_state *st, const ferry_http_limits *limits,
	bool version_ok)
{
	/* known from here on, refused or not: a caller may need to read the body before it answers */
	r->chunked = st->chunked;
	r->content_length = st->chunked ? -1 : st->cl;
	if (!version_ok) {
		return refuse(r, FERRY_HTTP_VERSION_NOT_SUPPORTED, "HTTP version not supported");
	}
	const char *authority = NULL, *rest = NULL;
	size_t alen = 0, rlen = 0;
	int form = ferry_http_target_form(r->method, r->method_len, r->target, r->target_len, &authority, &alen, &rest, &rlen);
	if (form == FH_FORM_INVALID) {
		return refuse(r, FERRY_HTTP_BAD_REQUEST, "invalid request target");
	}
	if (st->folded) {
		/* RFC 9112 §5.2 lets a server refuse obs-fold, and the front does (check.go) */
		return refuse(r, FERRY_HTTP_BAD_REQUEST, "obsolete line folding in a header field");
	}
	if ((limits && limits->max_headers && st->lines > limits->max_headers) || st->lines > r->field_slots) {
		return refuse(r, FERRY_HTTP_HEADERS_TOO_LARGE, "too many request header fields");
	}
	if (st->hosts > 1) {
		return refuse(r, FERRY_HTTP_BAD_REQUEST, "more than one Host header");
	}
	if (st->hosts == 0 && r->minor == 1) {
		return refuse(r, FERRY_HTTP_BAD_REQUEST, "missing required Host header");
	}
	if (st->lengths > 0 && st->encodings > 0) {
		/* RFC 9112 §6.1: smuggling, or a broken proxy */
		return refuse(r, FERRY_HTTP_BAD_REQUEST, "both Content-Length and Transfer-Encoding");
	}
	if (st->hosts == 1) {
		r->host = r->fields[st->host_field].value, r->host_len = r->fields[st->host_field].value_len;
		if (!ferry_http_valid_host(r->host, r->host_len, false)) {
			return refuse(r, FERRY_HTTP_BAD_REQUEST, "invalid Host header");
		}
	}
	if (form == FH_FORM_AUTHORITY) {
		return refuse(r, FERRY_HTTP_METHOD_NOT_ALLOWED, "CONNECT is not supported");
	}
	/* OPTIONS * is the front's to answer, before it judges a body's length (ferry_http.h) */
	if (form != FH_FORM_ASTERISK && limits && limits->max_body && r->content_length > 0
		&& (uint64_t)r->content_length > limits->max_body) {
		return refuse(r, FERRY_HTTP_PAYLOAD_TOO_LARGE, "request body larger than max_body_size");
	}
	const char *t = r->target;
	size_t tlen = r->target_len;
	if (form == FH_FORM_ABSOLUTE) {
		/* RFC 9112 §3.2.2: the authority replaces Host; PHP gets the rest, "/" when empty */
		r->host = authority, r->host_len = alen;
		t = rest, tlen = rlen;
	}
	const char *q = form == FH_FORM_ASTERISK ? NULL : memchr(t, '?', tlen);
	r->path = t, r->path_len = q ? (size_t)(q - t) : tlen;
	if (q) {
		r->query = q + 1, r->query_len = tlen - r->path_len - 1;
	}
	if (r->path_len == 0) {
		r->path = slash, r->path_len = 1;
	}
	r->keep_alive = !st->close && (r->minor == 1 || (st->conn && ferry_http_has_keep_alive(st->conn, st->conn_len)));
	r->expect_continue = st->expect == 1 && r->minor == 1;
	return FERRY_HTTP_OK;
}

ferry_http_status ferry_http_parse_head(const char *buf, size_t len, const ferry_http_limits *limits,
	ferry_http_request *r, size_t *consumed)
{
	size_t max_head = limits && limits->max_head ? limits->max_head : FH_DEFAULT_MAX_HEAD;
	const unsigned char *b = (const unsigned char *)buf;
	size_t n = len < max_head ? len : max_head, p = 0;
	*consumed = 0;
	r->method = r->target = r->path = r->query = r->host = NULL;
	r->method_len = r->target_len = r->path_len = r->query_len = r->host_len = 0;
	r->minor = 0, r->field_count = 0, r->content_length = -1;
	r->chunked = r->keep_alive = r->expect_continue = false;
	r->error = NULL;

	/* empty lines before the request line are skipped (fasthttp: any number of them) */
	for (;;) {
		if (p < n && b[p] == '\n') {
			p++;
		} else if (p + 1 < n && b[p] == '\r' && b[p + 1] == '\n') {
			p += 2;
		} else {
			break;
		}
	}
	/* The request line, as fasthttp's parseFirstLine reads it, refused as soon as it is whole:
	 * method up to the first space, the version after the last one, the target between. */
	const unsigned char *lf = memchr(b + p, '\n', n - p);
	if (!lf) {
		INCOMPLETE();
	}
	size_t e = (size_t)(lf - b), i = p;
	if (e > p && b[e - 1] == '\r') {
		e--;
	}
	while (ferry_http_tchar[b[i]] & FH_TCHAR) {
		i++;
	}
	if (i == p || i >= e || b[i] != ' ') {
		return refuse(r, FERRY_HTTP_BAD_REQUEST, "invalid request method");
	}
	r->method = buf + p, r->method_len = i - p;
	size_t sp = e - 1;
	while (b[sp] != ' ') {
		sp--;
	}
	if (sp <= i + 1) {
		return refuse(r, FERRY_HTTP_BAD_REQUEST, "invalid request line");
	}
	const unsigned char *v = b + sp + 1;
	if (e - sp - 1 != 8 || memcmp(v, "HTTP/", 5) != 0 || v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9') {
		return refuse(r, FERRY_HTTP_BAD_REQUEST, "invalid HTTP version");
	}
	bool version_ok = v[5] == '1' && v[6] == '.' && (v[7] == '1' || v[7] == '0');
	r->minor = v[7] - '0';
	r->target = buf + i + 1, r->target_len = sp - i - 1;

	/* The fields. fasthttp judges them once the whole head is read (a broken field in a head
	 * larger than the read buffer is a 431), so a fault is kept until the end is found. */
	head_state st = {0};
	st.cl = -1;
	p = (size_t)(lf - b) + 1;
	size_t name = 0, name_len = 0, vstart = 0, first_bad = 0;
	bool open = false, folded = false;
	size_t blank;
	for (;;) {
		if (p >= n) {
			INCOMPLETE();
		}
		unsigned char c = b[p];
		if (c == '\n' || (c == '\r' && p + 1 < n && b[p + 1] == '\n')) {
			blank = p;
			p += c == '\n' ? 1 : 2;
			break;
		}
		if (c == '\r' && p + 1 >= n) {
			INCOMPLETE();
		}
		lf = memchr(b + p, '\n', n - p);
		if (!lf) {
			INCOMPLETE();
		}
		size_t end = (size_t)(lf - b);
		if (st.error) {
			p = end + 1; /* only the end of the head is looked for now */
			continue;
		}
		if (c == ' ' || c == '\t') {
			/* obs-fold: a line starting with a blank continues the field above, unless it
			 * holds a colon (fasthttp then reads a field name starting with a blank) */
			if (!open || memchr(b + p, ':', end - p)) {
				st.error = "invalid header field name";
				open = false;
			} else {
				folded = true;
			}
			p = end + 1;
			continue;
		}
		if (open) {
			end_field(&st, r, b, name, name_len, vstart, p - 1, first_bad, folded, false);
			open = false;
			if (st.error) {
				continue;
			}
		}
		st.lines++;
		i = p;
		while (ferry_http_tchar[b[i]] & FH_TCHAR) {
			i++;
		}
		if (i == p || b[i] != ':') {
			st.error = i == p && b[i] == ':' ? "empty header field name"
				: memchr(b + i, ':', end - i) ? "invalid header field name" : "a header line without a colon";
			p = end + 1;
			continue;
		}
		name = p, name_len = i - p;
		for (i++; b[i] == ' ' || b[i] == '\t'; i++) {
		}
		vstart = i;
		while (ferry_http_tchar[b[i]] & FH_VALUE) {
			i++;
		}
		first_bad = i;
		open = true, folded = false;
		p = end + 1;
	}
	if (open) {
		/* fasthttp's name search for the field after it runs on over the buffered bytes */
		bool colon_after = memchr(b + blank, ':', n - blank) != NULL;
		end_field(&st, r, b, name, name_len, vstart, blank - 1, first_bad, folded, !colon_after);
	}
	*consumed = p;
	if (st.error) {
		return refuse(r, FERRY_HTTP_BAD_REQUEST, st.error);
	}
	r->field_count = st.lines < r->field_slots ? st.lines : r->field_slots;
	return settle(r, &st, limits, version_ok);
}
