/*
 * Address text as Go's net/netip reads and prints it (see ferry_forwarded_addr.h). The
 * quirks are netip's and kept on purpose: no leading zero in an IPv4 octet, a zone of any
 * bytes after the first '%', a port of any number of digits up to 65535.
 */
#include <string.h>

#include "ferry_forwarded_int.h"

static const uint8_t mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* netip's parseIPv4Fields: exactly four decimal octets, none with a leading zero. */
static bool parse4(const char *s, size_t n, uint8_t out[4])
{
	int val = 0, digits = 0, pos = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c >= '0' && c <= '9') {
			if (digits == 1 && val == 0) {
				return false;
			}
			val = val * 10 + (c - '0');
			digits++;
			if (val > 255) {
				return false;
			}
		} else if (c == '.') {
			if (i == 0 || i == n - 1 || s[i - 1] == '.' || pos == 3) {
				return false;
			}
			out[pos++] = (uint8_t) val;
			val = 0;
			digits = 0;
		} else {
			return false;
		}
	}
	if (pos < 3) {
		return false;
	}
	out[3] = (uint8_t) val;
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

/* netip's parseIPv6, step for step, so that the same texts fail. */
static bool parse6(const char *s, size_t n, ferry_addr *a)
{
	const char *pct = memchr(s, '%', n);
	a->zone = NULL;
	a->zone_len = 0;
	if (pct) {
		a->zone = pct + 1;
		a->zone_len = n - (size_t) (pct + 1 - s);
		if (a->zone_len == 0) {
			return false;
		}
		n = (size_t) (pct - s);
	}
	uint8_t ip[16] = {0};
	int ellipsis = -1, i = 0;
	if (n >= 2 && s[0] == ':' && s[1] == ':') {
		ellipsis = 0;
		s += 2;
		n -= 2;
		if (n == 0) {
			memset(a->b, 0, 16);
			a->v4 = false;
			return true;
		}
	}
	while (i < 16) {
		size_t off = 0;
		unsigned acc = 0;
		for (; off < n; off++) {
			int h = hexval(s[off]);
			if (h < 0) {
				break;
			}
			if (off > 3) {
				return false;
			}
			acc = (acc << 4) + (unsigned) h;
		}
		if (off == 0) {
			return false;
		}
		if (off < n && s[off] == '.') {
			if ((ellipsis < 0 && i != 12) || i + 4 > 16) {
				return false;
			}
			if (!parse4(s, n, ip + i)) {
				return false;
			}
			n = 0;
			i += 4;
			break;
		}
		ip[i] = (uint8_t) (acc >> 8);
		ip[i + 1] = (uint8_t) acc;
		i += 2;
		s += off;
		n -= off;
		if (n == 0) {
			break;
		}
		if (s[0] != ':' || n == 1) {
			return false;
		}
		s++;
		n--;
		if (s[0] == ':') {
			if (ellipsis >= 0) {
				return false;
			}
			ellipsis = i;
			s++;
			n--;
			if (n == 0) {
				break;
			}
		}
	}
	if (n != 0) {
		return false;
	}
	if (i < 16) {
		if (ellipsis < 0) {
			return false;
		}
		int gap = 16 - i;
		for (int j = i - 1; j >= ellipsis; j--) {
			ip[j + gap] = ip[j];
		}
		memset(ip + ellipsis, 0, (size_t) gap);
	} else if (ellipsis >= 0) {
		return false;
	}
	memcpy(a->b, ip, 16);
	a->v4 = false;
	return true;
}

bool ferry_addr_parse(const char *s, size_t n, ferry_addr *a)
{
	/* netip decides by the first '.', ':' or '%' it meets. */
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
			case '.':
				memcpy(a->b, mapped_prefix, 12);
				a->v4 = true;
				a->zone = NULL;
				a->zone_len = 0;
				return parse4(s, n, a->b + 12);
			case ':':
				return parse6(s, n, a);
			case '%':
				return false;
		}
	}
	return false;
}

static bool is_mapped(const ferry_addr *a)
{
	return memcmp(a->b, mapped_prefix, 12) == 0;
}

bool ferry_addrport_parse(const char *s, size_t n, ferry_addr *a)
{
	size_t colon = n;
	while (colon > 0 && s[colon - 1] != ':') {
		colon--;
	}
	if (colon == 0) {
		return false;
	}
	const char *ip = s, *port = s + colon;
	size_t ip_len = colon - 1, port_len = n - colon;
	bool v6 = false;
	if (ip_len == 0 || port_len == 0) {
		return false;
	}
	if (ip[0] == '[') {
		if (ip_len < 2 || ip[ip_len - 1] != ']') {
			return false;
		}
		ip++;
		ip_len -= 2;
		v6 = true;
	}
	/* strconv.ParseUint(port, 10, 16): digits only, leading zeros allowed. */
	unsigned long value = 0;
	for (size_t i = 0; i < port_len; i++) {
		if (port[i] < '0' || port[i] > '9') {
			return false;
		}
		value = value * 10 + (unsigned long) (port[i] - '0');
		if (value > 65535) {
			return false;
		}
	}
	if (!ferry_addr_parse(ip, ip_len, a)) {
		return false;
	}
	return v6 ? !a->v4 : a->v4;
}

void ferry_addr_unmap(ferry_addr *a)
{
	if (!a->v4 && is_mapped(a)) {
		a->v4 = true;
		a->zone = NULL;
		a->zone_len = 0;
	}
}

static bool prefix_match(const uint8_t *x, const uint8_t *y, int bits)
{
	int whole = bits / 8, rest = bits % 8;
	if (memcmp(x, y, (size_t) whole) != 0) {
		return false;
	}
	if (rest == 0) {
		return true;
	}
	uint8_t mask = (uint8_t) (0xff << (8 - rest));
	return ((x[whole] ^ y[whole]) & mask) == 0;
}

/*
 * An IPv4 network is kept as its IPv4-mapped IPv6 one, prefix length 96 + n. An IPv6
 * network under 96 bits never holds an IPv4 address for netip (it tells the families
 * apart), and one inside ::ffff:0:0/96 holds nothing at all, since every address is
 * unmapped before the test: bits -1 says so.
 */
bool ferry_addr_trusted(const ferry_trusted *t, const ferry_addr *addr)
{
	ferry_addr a = *addr;
	ferry_addr_unmap(&a);
	if (a.zone_len > 0) {
		return false;
	}
	for (size_t i = 0; i < t->count; i++) {
		const ferry_cidr *c = &t->nets[i];
		if (c->bits < 0 || c->bits > 128 || (a.v4 && c->bits < 96)) {
			continue;
		}
		if (prefix_match(a.b, c->addr, c->bits)) {
			return true;
		}
	}
	return false;
}

static void mask(uint8_t *b, int bits)
{
	for (int i = 0; i < 16; i++) {
		int keep = bits - 8 * i;
		if (keep <= 0) {
			b[i] = 0;
		} else if (keep < 8) {
			b[i] &= (uint8_t) (0xff << (8 - keep));
		}
	}
}

static void cidr_from(const ferry_addr *a, int bits, ferry_cidr *out)
{
	memcpy(out->addr, a->b, 16);
	if (a->v4) {
		bits += 96;
	} else if (bits >= 96 && is_mapped(a)) {
		bits = -1;
	}
	if (bits >= 0) {
		mask(out->addr, bits);
	}
	out->bits = bits;
}

/* gateway.ParseProxies: netip.ParsePrefix (masked), else netip.ParseAddr as a /32 or /128. */
bool ferry_trusted_parse(const char *s, size_t n, ferry_cidr *out)
{
	ferry_addr a;
	size_t slash = n;
	while (slash > 0 && s[slash - 1] != '/') {
		slash--;
	}
	if (slash > 0 && ferry_addr_parse(s, slash - 1, &a) && a.zone_len == 0) {
		const char *b = s + slash;
		size_t bn = n - slash;
		/* strconv.Atoi after netip's refusal of a sign or a leading zero */
		bool ok = bn > 0 && !(bn > 1 && (b[0] < '1' || b[0] > '9'));
		long bits = 0;
		for (size_t i = 0; ok && i < bn; i++) {
			ok = b[i] >= '0' && b[i] <= '9';
			bits = bits * 10 + (b[i] - '0');
			if (bits > 128) {
				ok = false;
			}
		}
		if (ok && bits <= (a.v4 ? 32 : 128)) {
			cidr_from(&a, (int) bits, out);
			return true;
		}
	}
	if (!ferry_addr_parse(s, n, &a)) {
		return false;
	}
	cidr_from(&a, a.v4 ? 32 : 128, out);
	return true;
}

static size_t put_dec(char *p, unsigned v)
{
	size_t n = 0;
	if (v >= 100) {
		p[n++] = (char) ('0' + v / 100);
	}
	if (v >= 10) {
		p[n++] = (char) ('0' + v / 10 % 10);
	}
	p[n++] = (char) ('0' + v % 10);
	return n;
}

size_t ferry_addr_format_port0(const ferry_addr *a, char *out, size_t cap)
{
	/* the longest text before the zone: "[" 39 "]:0" */
	char buf[48];
	size_t n = 0;
	if (a->v4) {
		for (int i = 0; i < 4; i++) {
			if (i > 0) {
				buf[n++] = '.';
			}
			n += put_dec(buf + n, a->b[12 + i]);
		}
	} else {
		/* RFC 5952 as netip prints it: the longest run of two or more zero groups, the first on a tie */
		int zs = -1, ze = -1;
		for (int i = 0; i < 8; i++) {
			int j = i;
			while (j < 8 && a->b[2 * j] == 0 && a->b[2 * j + 1] == 0) {
				j++;
			}
			if (j - i >= 2 && j - i > ze - zs) {
				zs = i;
				ze = j;
			}
		}
		buf[n++] = '[';
		for (int i = 0; i < 8; i++) {
			if (i == zs) {
				buf[n++] = ':';
				buf[n++] = ':';
				i = ze;
				if (i >= 8) {
					break;
				}
			} else if (i > 0) {
				buf[n++] = ':';
			}
			unsigned g = (unsigned) a->b[2 * i] << 8 | a->b[2 * i + 1];
			static const char hex[] = "0123456789abcdef";
			bool started = false;
			for (int shift = 12; shift >= 0; shift -= 4) {
				unsigned d = g >> shift & 0xf;
				if (d || started || shift == 0) {
					buf[n++] = hex[d];
					started = true;
				}
			}
		}
	}
	size_t zone = a->v4 ? 0 : a->zone_len;
	/* out is a C string: a NUL in a zone would cut it (no field value holds one: ferry_http.c refuses it) */
	if (zone && memchr(a->zone, '\0', zone)) {
		return 0;
	}
	size_t total = n + (zone ? zone + 1 : 0) + (a->v4 ? 0 : 1) + 2;
	if (total + 1 > cap) {
		return 0;
	}
	memcpy(out, buf, n);
	if (zone) {
		out[n++] = '%';
		memcpy(out + n, a->zone, zone);
		n += zone;
	}
	if (!a->v4) {
		out[n++] = ']';
	}
	out[n++] = ':';
	out[n++] = '0';
	out[n] = '\0';
	return n;
}
