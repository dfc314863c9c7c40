/*
 * ns per request head: ferry_http_parse_head() against Debian's libhttp-parser (nodejs's
 * http_parser 2.9) on the same typical request, a ~200-byte GET with 6 header fields. Both
 * hand each field to the caller (ours fills slots, http_parser's callbacks fill the same
 * slots); ours also checks the target and Host grammar, http_parser does not.
 *
 *   ext/ferry/bench/http_bench.sh     (apt-get install libhttp-parser-dev for the comparison)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../ferry_http.h"
#ifdef WITH_HTTP_PARSER
#include <http_parser.h>
#endif

static const char REQ[] =
	"GET /api/items?id=42&sort=desc HTTP/1.1\r\n"
	"Host: app.example.com\r\n"
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0\r\n"
	"Accept: text/html,application/json\r\n"
	"Accept-Encoding: gzip, br\r\n"
	"Cookie: sid=4f2a9c1e7b\r\n"
	"Connection: keep-alive\r\n"
	"\r\n";

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static volatile size_t sink;

static double bench_ferry(char *buf, size_t len, long n)
{
	ferry_http_field fields[100];
	ferry_http_limits lim = {.max_head = 65536, .max_headers = 100, .max_body = 8 << 20};
	double t = now();
	for (long i = 0; i < n; i++) {
		ferry_http_request r = {.fields = fields, .field_slots = 100};
		size_t consumed;
		if (ferry_http_parse_head(buf, len, &lim, &r, &consumed) != FERRY_HTTP_OK) {
			abort();
		}
		sink += consumed + r.field_count;
	}
	return (now() - t) / n;
}

#ifdef WITH_HTTP_PARSER
typedef struct {
	ferry_http_field fields[100];
	size_t n;
	const char *url;
	size_t url_len;
} collected;

static int on_url(http_parser *p, const char *at, size_t len)
{
	collected *c = p->data;
	c->url = at, c->url_len = len;
	return 0;
}

static int on_field(http_parser *p, const char *at, size_t len)
{
	collected *c = p->data;
	c->fields[c->n].name = at, c->fields[c->n].name_len = len;
	return 0;
}

static int on_value(http_parser *p, const char *at, size_t len)
{
	collected *c = p->data;
	c->fields[c->n].value = at, c->fields[c->n].value_len = len;
	c->n++;
	return 0;
}

static double bench_http_parser(const char *buf, size_t len, long n)
{
	http_parser_settings s;
	memset(&s, 0, sizeof s);
	s.on_url = on_url, s.on_header_field = on_field, s.on_header_value = on_value;
	collected c;
	http_parser p;
	double t = now();
	for (long i = 0; i < n; i++) {
		c.n = 0;
		http_parser_init(&p, HTTP_REQUEST);
		p.data = &c;
		size_t done = http_parser_execute(&p, &s, buf, len);
		if (done != len || p.http_errno != HPE_OK) {
			abort();
		}
		sink += done + c.n;
	}
	return (now() - t) / n;
}
#endif

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	size_t len = sizeof REQ - 1;
	char *buf = malloc(len);
	memcpy(buf, REQ, len);
	double best = 1e18;
	for (int round = 0; round < 5; round++) {
		double ns = bench_ferry(buf, len, n);
		best = ns < best ? ns : best;
	}
	printf("request: %zu bytes, 6 fields, %ld parses per round, best of 5\n", len, n);
	printf("ferry_http_parse_head: %6.1f ns/request\n", best);
#ifdef WITH_HTTP_PARSER
	double hp = 1e18;
	for (int round = 0; round < 5; round++) {
		double ns = bench_http_parser(buf, len, n);
		hp = ns < hp ? ns : hp;
	}
	printf("http_parser %d.%d.%d:    %6.1f ns/request (ferry/http_parser: %.2fx)\n", HTTP_PARSER_VERSION_MAJOR,
		HTTP_PARSER_VERSION_MINOR, HTTP_PARSER_VERSION_PATCH, hp, best / hp);
#endif
	free(buf);
	return 0;
}
