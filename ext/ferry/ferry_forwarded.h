/*
 * server.trusted_proxies for direct mode: the client a trusted proxy reports, read from
 * Forwarded (RFC 7239) or X-Forwarded-For/-Proto/-Host exactly as the Go front reads them
 * (internal/gateway/proxy.go and forwarded.go). Plain C, no allocation per request.
 */
#ifndef FERRY_FORWARDED_H
#define FERRY_FORWARDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry_http.h"

typedef struct {
	uint8_t addr[16]; /* IPv4 as an IPv4-mapped IPv6 address */
	int bits;         /* prefix length over the 128 bits */
} ferry_cidr;

typedef struct {
	ferry_cidr *nets;
	size_t count;
} ferry_trusted;

/*
 * Parses one server.trusted_proxies entry (a CIDR or a single address, as the front's
 * ParseProxies accepts them) into *out; false when it is not one.
 */
bool ferry_trusted_parse(const char *entry, size_t len, ferry_cidr *out);

typedef struct {
	char remote[64];        /* the client as "ip:port" (the front's remote_addr form) */
	const char *host;       /* the host the client asked for: r's, or a forwarded one (points into r's buffer) */
	size_t host_len;
	bool https;             /* the scheme the client used */
} ferry_client;

/*
 * The client of request r received from peer (its "ip:port" in the front's form, as
 * accept() gave it): when peer is a trusted proxy, the forwarded client, host and scheme;
 * otherwise peer, r's host and plain http. out->host may point into a buffer of
 * ferry_forwarded.c's own, valid until the next call.
 */
void ferry_forwarded_client(const ferry_trusted *t, const ferry_http_request *r, const char *peer, ferry_client *out);

#endif
