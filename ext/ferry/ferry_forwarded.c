/*
 * server.trusted_proxies for direct mode (ferry_forwarded.h): the same walk as the Go
 * front's internal/gateway/proxy.go and forwarded.go, in the same order, because the
 * order is the behaviour (which element a malformed line, an unknown node or a ring
 * overflow stops at). cmd/ferry/direct_forwarded_e2e_test.go holds the two side by side.
 *
 * Known difference: an address whose "ip:port" form passes 63 bytes (only an IPv6 zone
 * of 20 bytes or more makes one) is no address here, since ferry_client.remote is fixed;
 * the front would print it. And a quoted value with \-escapes is read through a buffer
 * of FWD_SCRATCH bytes: a longer one is no address or host (server.max_header_size is
 * 64KiB unless raised).
 */
#include <string.h>

#include "ferry_forwarded.h"
#include "ferry_forwarded_int.h"

#define FWD_RING 16 /* forwardedRing's size: the front stops at the same element */
#define FWD_SCRATCH 65536

typedef struct {
	const char *p; /* a token, or a quoted-string's body with its \-escapes */
	size_t n;
	bool escaped;
} fwd_value;

typedef struct {
	fwd_value node, proto, host;
} fwd_elem;

typedef struct {
	fwd_elem e[FWD_RING];
	size_t n; /* elements parsed; the last min(n, FWD_RING) are kept */
} fwd_ring;

/* The forwarded host lives here while its \-escapes are resolved: valid until the next call. */
static char host_buf[FWD_SCRATCH];
static char node_buf[FWD_SCRATCH];

static bool name_is(const ferry_http_field *f, const char *name)
{
	size_t n = strlen(name);
	if (f->name_len != n) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char c = f->name[i];
		if (c >= 'A' && c <= 'Z') {
			c = (char) (c - 'A' + 'a');
		}
		if (c != name[i]) {
			return false;
		}
	}
	return true;
}

/* fwdValue.bytes(): the value with its escapes resolved, in buf when it had any; NULL when it does not fit. */
static const char *unescape(const fwd_value *v, char *buf, size_t cap, size_t *len)
{
	if (!v->escaped) {
		*len = v->n;
		return v->p;
	}
	size_t o = 0;
	for (size_t i = 0; i < v->n; i++) {
		if (v->p[i] == '\\' && i + 1 < v->n) {
			i++;
		}
		if (o == cap) {
			return NULL;
		}
		buf[o++] = v->p[i];
	}
	*len = o;
	return buf;
}

static bool tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
		|| (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static bool fwd_control(unsigned char c)
{
	return (c < ' ' && c != '\t') || c == 0x7f;
}

static void skip_ows(const char **p, const char *end)
{
	while (*p < end && (**p == ' ' || **p == '\t')) {
		(*p)++;
	}
}

static bool name_eq(const char *p, size_t n, const char *word)
{
	return ferry_fwd_equal_fold(p, n, word);
}

static void ring_push(fwd_ring *r, const fwd_elem *e)
{
	r->e[r->n % FWD_RING] = *e;
	r->n++;
}

/* parseForwarded: RFC 7239's grammar with empty elements and pairs allowed; false for a line not to believe. */
static bool parse_forwarded(fwd_ring *r, const char *p, size_t len)
{
	const char *end = p + len;
	fwd_elem cur;
	memset(&cur, 0, sizeof(cur));
	int pairs = 0;
	r->n = 0;
	for (;;) {
		skip_ows(&p, end);
		if (p == end) {
			break;
		}
		if (*p == ',') {
			if (pairs > 0) {
				ring_push(r, &cur);
			}
			memset(&cur, 0, sizeof(cur));
			pairs = 0;
			p++;
			continue;
		}
		if (*p == ';') {
			p++;
			continue;
		}
		const char *name = p;
		while (p < end && tchar((unsigned char) *p)) {
			p++;
		}
		size_t name_len = (size_t) (p - name);
		if (name_len == 0) {
			return false;
		}
		skip_ows(&p, end);
		if (p == end || *p != '=') {
			return false;
		}
		p++;
		skip_ows(&p, end);
		fwd_value val = {NULL, 0, false};
		if (p < end && *p == '"') {
			const char *q = ++p;
			bool closed = false;
			for (; q < end; q++) {
				unsigned char c = (unsigned char) *q;
				if (c == '"') {
					closed = true;
					break;
				}
				if (c == '\\' && q + 1 < end) {
					q++;
					val.escaped = true;
					if (fwd_control((unsigned char) *q)) {
						return false;
					}
				} else if (fwd_control(c)) {
					return false;
				}
			}
			if (!closed) {
				return false;
			}
			val.p = p;
			val.n = (size_t) (q - p);
			p = q + 1;
		} else {
			const char *stop = p;
			while (stop < end && *stop != ';' && *stop != ',') {
				stop++;
			}
			/* Not strictly a token: proxies write for=[v6]:port unquoted. */
			size_t n = (size_t) (stop - p);
			while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) {
				n--;
			}
			if (n == 0) {
				return false;
			}
			for (size_t i = 0; i < n; i++) {
				unsigned char c = (unsigned char) p[i];
				if (c <= ' ' || c == 0x7f || c == '"') {
					return false;
				}
			}
			val.p = p;
			val.n = n;
			p = stop;
		}
		if (name_eq(name, name_len, "for")) {
			cur.node = val;
		} else if (name_eq(name, name_len, "proto")) {
			cur.proto = val;
		} else if (name_eq(name, name_len, "host")) {
			cur.host = val;
		}
		pairs++;
		skip_ows(&p, end);
		if (p < end && *p != ';' && *p != ',') {
			return false;
		}
	}
	if (pairs > 0) {
		ring_push(r, &cur);
	}
	return true;
}

/* forwardedNode: "ip:port", "[v6]:port", IPv4 or "[v6]"; unknown and obfuscated names are none. */
static bool forwarded_node(const fwd_value *v, ferry_addr *a)
{
	size_t n;
	const char *s = unescape(v, node_buf, sizeof(node_buf), &n);
	if (!s) {
		return false;
	}
	if (ferry_addrport_parse(s, n, a)) {
		ferry_addr_unmap(a);
		return true;
	}
	bool bracketed = n > 2 && s[0] == '[' && s[n - 1] == ']';
	if (!ferry_addr_parse(bracketed ? s + 1 : s, bracketed ? n - 2 : n, a) || !(a->v4 || bracketed)) {
		return false;
	}
	ferry_addr_unmap(a);
	return true;
}

/* An address the client field can hold, printed there; false for one it cannot. */
static bool print_client(const ferry_addr *a, char out[64])
{
	return ferry_addr_format_port0(a, out, 64) > 0;
}

/* forwardedFor: the X-Forwarded-For entries of every line, from the right. */
static void forwarded_for(const ferry_trusted *t, const ferry_http_request *r, const char *peer, char out[64])
{
	bool found = false;
	for (size_t i = r->field_count; i-- > 0;) {
		const ferry_http_field *f = &r->fields[i];
		if (!name_is(f, "x-forwarded-for")) {
			continue;
		}
		size_t n = f->value_len;
		for (bool more = true; more;) {
			size_t c = n;
			while (c > 0 && f->value[c - 1] != ',') {
				c--;
			}
			const char *item = f->value + c;
			size_t item_len = n - c;
			if (c > 0) {
				n = c - 1;
			} else {
				more = false;
			}
			ferry_fwd_trim_space(&item, &item_len);
			ferry_addr a;
			char printed[64];
			if (!ferry_addr_parse(item, item_len, &a)) {
				goto done;
			}
			ferry_addr_unmap(&a);
			if (!print_client(&a, printed)) {
				goto done;
			}
			memcpy(out, printed, 64);
			found = true;
			if (!ferry_addr_trusted(t, &a)) {
				goto done;
			}
		}
	}
done:
	if (!found) {
		strncpy(out, peer, 63);
		out[63] = '\0';
	}
}

static void apply_proto(const fwd_value *v, bool *https)
{
	char buf[16];
	size_t n;
	const char *s = unescape(v, buf, sizeof(buf), &n);
	if (!s) {
		return;
	}
	if (ferry_fwd_equal_fold(s, n, "https")) {
		*https = true;
	} else if (ferry_fwd_equal_fold(s, n, "http")) {
		*https = false;
	}
}

static void apply_host(const fwd_value *v, ferry_client *out)
{
	size_t n;
	/* Resolved in the scratch first: host_buf may hold the host a right element gave. */
	const char *s = unescape(v, node_buf, sizeof(node_buf), &n);
	if (!s || n == 0 || !ferry_fwd_valid_host(s, n)) {
		return;
	}
	if (s == node_buf) {
		memcpy(host_buf, node_buf, n);
		s = host_buf;
	}
	out->host = s;
	out->host_len = n;
}

/* forwardedRFC: the Forwarded elements of every line, from the right. */
static void forwarded_rfc(const ferry_trusted *t, const ferry_http_request *r, ferry_client *out)
{
	static fwd_ring ring; /* 16 elements of 3 slices: kept off the stack of PHP's callers */
	char client[64];
	for (size_t i = r->field_count; i-- > 0;) {
		const ferry_http_field *f = &r->fields[i];
		if (!name_is(f, "forwarded")) {
			continue;
		}
		if (!parse_forwarded(&ring, f->value, f->value_len)) {
			break;
		}
		for (size_t j = 0; j < ring.n; j++) {
			if (j >= FWD_RING) {
				return;
			}
			const fwd_elem *e = &ring.e[(ring.n - 1 - j) % FWD_RING];
			ferry_addr a;
			if (!forwarded_node(&e->node, &a) || !print_client(&a, client)) {
				return;
			}
			memcpy(out->remote, client, 64);
			apply_proto(&e->proto, &out->https);
			apply_host(&e->host, out);
			if (!ferry_addr_trusted(t, &a)) {
				return;
			}
		}
	}
}

static bool has_field(const ferry_http_request *r, const char *name, size_t *last)
{
	for (size_t i = r->field_count; i-- > 0;) {
		if (name_is(&r->fields[i], name)) {
			*last = i;
			return true;
		}
	}
	return false;
}

/* lastItem: the last list element of the last line, trimmed. */
static void last_item(const ferry_http_field *f, const char **s, size_t *n)
{
	size_t c = f->value_len;
	while (c > 0 && f->value[c - 1] != ',') {
		c--;
	}
	*s = f->value + c;
	*n = f->value_len - c;
	ferry_fwd_trim_space(s, n);
}

void ferry_forwarded_client(const ferry_trusted *t, const ferry_http_request *r, const char *peer, ferry_client *out)
{
	strncpy(out->remote, peer, sizeof(out->remote) - 1);
	out->remote[sizeof(out->remote) - 1] = '\0';
	out->host = r->host;
	out->host_len = r->host_len;
	out->https = false;
	ferry_addr pa;
	if (t->count == 0 || !ferry_addrport_parse(peer, strlen(peer), &pa) || !ferry_addr_trusted(t, &pa)) {
		return;
	}
	size_t last;
	if (has_field(r, "forwarded", &last)) {
		/* Forwarded and X-Forwarded-For naming different clients: one is the client's word. */
		ferry_client fwd = *out;
		forwarded_rfc(t, r, &fwd);
		if (has_field(r, "x-forwarded-for", &last)) {
			char xff[64];
			forwarded_for(t, r, out->remote, xff);
			if (strcmp(xff, fwd.remote) != 0) {
				return;
			}
		}
		*out = fwd;
		return;
	}
	if (has_field(r, "x-forwarded-for", &last)) {
		forwarded_for(t, r, peer, out->remote);
	}
	const char *s;
	size_t n;
	if (has_field(r, "x-forwarded-proto", &last)) {
		last_item(&r->fields[last], &s, &n);
		if (ferry_fwd_equal_fold(s, n, "https")) {
			out->https = true;
		} else if (ferry_fwd_equal_fold(s, n, "http")) {
			out->https = false;
		}
	}
	if (has_field(r, "x-forwarded-host", &last)) {
		last_item(&r->fields[last], &s, &n);
		if (n > 0 && ferry_fwd_valid_host(s, n)) {
			out->host = s;
			out->host_len = n;
		}
	}
}
