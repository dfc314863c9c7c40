/*
 * libFuzzer target for direct mode's trusted_proxies walk (ferry_forwarded.c). Input: 1
 * byte picking the peer and the trusted list, then header lines split at '\n', each line's
 * first byte picking its name (Forwarded, X-Forwarded-For, -Proto, -Host or another) and
 * the rest its value; the last line is the Host. Checks, beyond what ASan/UBSan catch:
 *  - remote is NUL-terminated within its 64 bytes, and is the peer or an "ip:port" that
 *    reads back as one (what the front's netip would print);
 *  - host is r's host, or lies inside the input, or (escapes resolved) passes the Host
 *    grammar; every byte of it is read, so ASan reports one outside its buffer;
 *  - an address that parses prints and reads back to the same address;
 *  - any slice of the input given to ferry_trusted_parse() returns, and a network it
 *    accepts has a prefix length of -1 (none) or 0..128.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ferry_forwarded.h"
#include "../ferry_forwarded_int.h"

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); abort(); } } while (0)
#define MAX_FIELDS 64

static const char *const peers[] = {"10.0.0.5:1", "[2001:db8::5]:443", "[::ffff:10.0.0.5]:80", "192.0.2.1:7", "[fe80::1%eth0]:1", "junk"};
static const char *const lists[][3] = {
	{"10.0.0.0/8", "2001:db8::/32", NULL},
	{"0.0.0.0/0", "::/0", NULL},
	{"10.0.0.5", "::ffff:10.0.0.0/104", "fe80::/10"},
	{"192.0.2.0/24", NULL, NULL},
};
static const char *const names[] = {"Forwarded", "x-forwarded-for", "X-Forwarded-Proto", "X-FORWARDED-HOST", "X-Other"};

static ferry_cidr nets[4][3];
static ferry_trusted trusted[4];

static void setup(void)
{
	for (int i = 0; i < 4; i++) {
		trusted[i].nets = nets[i];
		for (int j = 0; j < 3 && lists[i][j]; j++) {
			CHECK(ferry_trusted_parse(lists[i][j], strlen(lists[i][j]), &nets[i][trusted[i].count++]));
		}
	}
}

static int inside(const void *p, size_t len, const uint8_t *buf, size_t size)
{
	const uint8_t *s = p;
	return s >= buf && s <= buf + size && len <= (size_t) (buf + size - s);
}

static void roundtrip(const char *s, size_t n)
{
	ferry_addr a, b;
	char out[64];
	if (!ferry_addr_parse(s, n, &a)) {
		return;
	}
	ferry_addr_unmap(&a);
	if (ferry_addr_format_port0(&a, out, sizeof(out)) == 0) {
		return;
	}
	CHECK(ferry_addrport_parse(out, strlen(out), &b));
	ferry_addr_unmap(&b);
	CHECK(memcmp(a.b, b.b, 16) == 0 && a.v4 == b.v4 && a.zone_len == b.zone_len);
	CHECK(a.zone_len == 0 || memcmp(a.zone, b.zone, a.zone_len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	if (!ready) {
		setup();
		ready = 1;
	}
	if (size < 1) {
		return 0;
	}
	const char *peer = peers[data[0] % 6];
	const ferry_trusted *t = &trusted[(data[0] / 6) % 4];
	const char *p = (const char *) data + 1, *end = (const char *) data + size;

	ferry_http_field fields[MAX_FIELDS];
	ferry_http_request r;
	memset(&r, 0, sizeof(r));
	r.fields = fields;
	r.field_slots = MAX_FIELDS;
	r.content_length = -1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t) (end - p));
		const char *stop = nl ? nl : end;
		if (!nl) {
			r.host = p;
			r.host_len = (size_t) (stop - p);
		} else if (stop > p && r.field_count < MAX_FIELDS) {
			ferry_http_field *f = &fields[r.field_count++];
			f->name = names[(unsigned char) *p % 5];
			f->name_len = strlen(f->name);
			f->value = p + 1;
			f->value_len = (size_t) (stop - p - 1);
			if (f->value_len == 0 && (unsigned char) *p >= 128) {
				f->value = NULL; /* an empty value may come without a pointer */
			}
			roundtrip(f->value, f->value_len);
			ferry_cidr c;
			if (ferry_trusted_parse(f->value, f->value_len, &c)) {
				CHECK(c.bits >= -1 && c.bits <= 128);
			}
		}
		p = nl ? nl + 1 : end;
	}

	ferry_client out;
	memset(&out, 0xAA, sizeof(out));
	ferry_forwarded_client(t, &r, peer, &out);
	CHECK(memchr(out.remote, '\0', sizeof(out.remote)) != NULL);
	if (strcmp(out.remote, peer) != 0) {
		ferry_addr a;
		CHECK(ferry_addrport_parse(out.remote, strlen(out.remote), &a));
	}
	CHECK(out.host_len == 0 || out.host != NULL);
	volatile uint8_t sink = 0;
	for (size_t i = 0; i < out.host_len; i++) {
		sink ^= (uint8_t) out.host[i];
	}
	(void) sink;
	if (!(out.host == r.host && out.host_len == r.host_len) && !inside(out.host, out.host_len, data, size)) {
		CHECK(ferry_fwd_valid_host(out.host, out.host_len));
	}
	return 0;
}
