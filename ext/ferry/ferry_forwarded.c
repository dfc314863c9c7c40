/*
 * server.trusted_proxies for direct mode (ferry_forwarded.h): the same walk as the Go
 * front's internal/gateway/proxy.go and forwarded.go, in the same order, because the
 * order is the behaviour (which element a malformed line, an unknown node or a ring
 * overflow stops at). cmd/ferry/direct_forwarded_e2e_test.go holds the two side by side;
 * ferry_forwarded_parse.c reads one Forwarded line.
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

#define FWD_SCRATCH 65536

/* The forwarded host lives here while its \-escapes are resolved: valid until the next call. */
static char host_buf[FWD_SCRATCH];
static char node_buf[FWD_SCRATCH];

enum { FWD_OTHER, FWD_FORWARDED, FWD_XFF, FWD_XFP, FWD_XFH, FWD_KINDS };

/* word is lower case; the field name matches it in any case */
static bool name_eq_lower(const char *name, const char *word, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (c >= 'A' && c <= 'Z') {
			c = (char) (c - 'A' + 'a');
		}
		if (c != word[i]) {
			return false;
		}
	}
	return true;
}

/* Which of the four fields f is; by length first, so that most names cost one compare. */
static int field_kind(const ferry_http_field *f)
{
	switch (f->name_len) {
		case 9:
			return name_eq_lower(f->name, "forwarded", 9) ? FWD_FORWARDED : FWD_OTHER;
		case 15:
			return name_eq_lower(f->name, "x-forwarded-for", 15) ? FWD_XFF : FWD_OTHER;
		case 16:
			return name_eq_lower(f->name, "x-forwarded-host", 16) ? FWD_XFH : FWD_OTHER;
		case 17:
			return name_eq_lower(f->name, "x-forwarded-proto", 17) ? FWD_XFP : FWD_OTHER;
	}
	return FWD_OTHER;
}

/* An empty value may come without a pointer: no arithmetic on NULL. */
static const char *value_of(const ferry_http_field *f)
{
	return f->value ? f->value : "";
}

/* A C string of at most 63 bytes: a longer peer (accept() never gives one) is cut. */
static void copy_peer(char out[64], const char *peer)
{
	size_t n = strnlen(peer, 63);
	memcpy(out, peer, n);
	out[n] = '\0';
}

/* forwardedNode: "ip:port", "[v6]:port", IPv4 or "[v6]"; unknown and obfuscated names are none. */
static bool forwarded_node(const fwd_value *v, ferry_addr *a)
{
	size_t n;
	const char *s = ferry_fwd_unescape(v, node_buf, sizeof(node_buf), &n);
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
static void forwarded_for(const ferry_trusted *t, const ferry_http_request *r, size_t last, const char *peer, char out[64])
{
	bool found = false;
	for (size_t i = last + 1; i-- > 0;) {
		const ferry_http_field *f = &r->fields[i];
		if (field_kind(f) != FWD_XFF) {
			continue;
		}
		const char *v = value_of(f);
		size_t n = f->value_len;
		for (bool more = true; more;) {
			size_t c = n;
			while (c > 0 && v[c - 1] != ',') {
				c--;
			}
			const char *item = v + c;
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
			memcpy(out, printed, strlen(printed) + 1);
			found = true;
			if (!ferry_addr_trusted(t, &a)) {
				goto done;
			}
		}
	}
done:
	if (!found) {
		copy_peer(out, peer);
	}
}

static void apply_proto(const fwd_value *v, bool *https)
{
	char buf[16];
	size_t n;
	const char *s = ferry_fwd_unescape(v, buf, sizeof(buf), &n);
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
	const char *s = ferry_fwd_unescape(v, node_buf, sizeof(node_buf), &n);
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
static void forwarded_rfc(const ferry_trusted *t, const ferry_http_request *r, size_t last, ferry_client *out)
{
	static fwd_ring ring; /* 16 elements of 3 slices: kept off the stack of PHP's callers */
	char client[64];
	for (size_t i = last + 1; i-- > 0;) {
		const ferry_http_field *f = &r->fields[i];
		if (field_kind(f) != FWD_FORWARDED) {
			continue;
		}
		if (!ferry_fwd_parse_line(&ring, value_of(f), f->value_len)) {
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
			memcpy(out->remote, client, strlen(client) + 1);
			apply_proto(&e->proto, &out->https);
			apply_host(&e->host, out);
			if (!ferry_addr_trusted(t, &a)) {
				return;
			}
		}
	}
}

/* lastItem: the last list element of the last line, trimmed. */
static void last_item(const ferry_http_field *f, const char **s, size_t *n)
{
	const char *v = value_of(f);
	size_t c = f->value_len;
	while (c > 0 && v[c - 1] != ',') {
		c--;
	}
	*s = v + c;
	*n = f->value_len - c;
	ferry_fwd_trim_space(s, n);
}

void ferry_forwarded_client(const ferry_trusted *t, const ferry_http_request *r, const char *peer, ferry_client *out)
{
	copy_peer(out->remote, peer);
	out->host = r->host;
	out->host_len = r->host_len;
	out->https = false;
	ferry_addr pa;
	if (t->count == 0 || !ferry_addrport_parse(peer, strlen(peer), &pa) || !ferry_addr_trusted(t, &pa)) {
		return;
	}
	/* the last field line of each kind, or field_count for none */
	size_t last[FWD_KINDS];
	for (int k = 0; k < FWD_KINDS; k++) {
		last[k] = r->field_count;
	}
	for (size_t i = 0; i < r->field_count; i++) {
		last[field_kind(&r->fields[i])] = i;
	}
	bool has_xff = last[FWD_XFF] < r->field_count;
	if (last[FWD_FORWARDED] < r->field_count) {
		/* Forwarded and X-Forwarded-For naming different clients: one is the client's word. */
		ferry_client fwd = *out;
		forwarded_rfc(t, r, last[FWD_FORWARDED], &fwd);
		if (has_xff) {
			char xff[64];
			forwarded_for(t, r, last[FWD_XFF], out->remote, xff);
			if (strcmp(xff, fwd.remote) != 0) {
				return;
			}
		}
		*out = fwd;
		return;
	}
	if (has_xff) {
		forwarded_for(t, r, last[FWD_XFF], peer, out->remote);
	}
	const char *s;
	size_t n;
	if (last[FWD_XFP] < r->field_count) {
		last_item(&r->fields[last[FWD_XFP]], &s, &n);
		if (ferry_fwd_equal_fold(s, n, "https")) {
			out->https = true;
		} else if (ferry_fwd_equal_fold(s, n, "http")) {
			out->https = false;
		}
	}
	if (last[FWD_XFH] < r->field_count) {
		last_item(&r->fields[last[FWD_XFH]], &s, &n);
		if (n > 0 && ferry_fwd_valid_host(s, n)) {
			out->host = s;
			out->host_len = n;
		}
	}
}
