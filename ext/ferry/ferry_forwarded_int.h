/*
 * The pieces of ferry_forwarded.c that mirror Go's standard library, which the front reads
 * forwarded headers with: IP addresses as net/netip reads and prints them (the front decides
 * with netip which text is an address and prints the client with it), and text as the
 * bytes package trims and compares it (ferry_forwarded_text.c).
 */
#ifndef FERRY_FORWARDED_INT_H
#define FERRY_FORWARDED_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry_forwarded.h"

typedef struct {
	uint8_t b[16];    /* IPv4 as an IPv4-mapped IPv6 address */
	bool v4;          /* an IPv4 address (netip's Is4), not IPv6 that maps one */
	const char *zone; /* an IPv6 zone, never empty when present; points into the parsed text */
	size_t zone_len;
} ferry_addr;

/* netip.ParseAddr: dotted IPv4 or IPv6 text (with an optional %zone). */
bool ferry_addr_parse(const char *s, size_t n, ferry_addr *a);

/* netip.ParseAddrPort, the port dropped: "1.2.3.4:80" or "[v6]:80". */
bool ferry_addrport_parse(const char *s, size_t n, ferry_addr *a);

/* Addr.Unmap: an IPv4-mapped IPv6 address becomes the IPv4 one (and loses its zone). */
void ferry_addr_unmap(ferry_addr *a);

/* Whether a, unmapped, lies in one of t's networks, as netip.Prefix.Contains decides. */
bool ferry_addr_trusted(const ferry_trusted *t, const ferry_addr *a);

/*
 * netip.AddrPortFrom(a, 0).String() of an unmapped a into out (NUL-terminated); its length,
 * or 0 when it does not fit in cap bytes or its zone holds a NUL.
 */
size_t ferry_addr_format_port0(const ferry_addr *a, char *out, size_t cap);

/* bytes.TrimSpace: Unicode white space (U+0085, U+00A0, U+2000.. too) off both ends. */
void ferry_fwd_trim_space(const char **s, size_t *n);

/*
 * bytes.EqualFold(s, word) for an ASCII lower-case word: Unicode simple folding, so that
 * U+017F (long s) matches 's' and U+212A (Kelvin) 'k', as they do for the front.
 */
bool ferry_fwd_equal_fold(const char *s, size_t n, const char *word);

/* The front's validHostField: uri-host [ ":" port ], as a Host field must be (grammar.go). */
bool ferry_fwd_valid_host(const char *s, size_t n);

/* Forwarded (RFC 7239), ferry_forwarded_parse.c */
#define FWD_RING 16 /* forwardedRing's size: the front stops at the same element */

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

/* fwdValue.bytes(): v with its \-escapes resolved (in buf when it has any); NULL when they do not fit in cap. */
const char *ferry_fwd_unescape(const fwd_value *v, char *buf, size_t cap, size_t *len);

/* parseForwarded(): the elements of one line into r, left to right; false for a line not to believe. */
bool ferry_fwd_parse_line(fwd_ring *r, const char *p, size_t len);

#endif
