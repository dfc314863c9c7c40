/*
 * The chunked transfer coding (RFC 9112 §7.1) of direct mode's requests, decoded the way the
 * Go front decodes it (fasthttp's parseChunkSize, readCrLf and ReadTrailer behind Ferry's
 * readBody), so that a body the front refuses is refused here too: at most 15 hex digits of
 * size, any extension bytes but LF up to the CR, CRLF after each chunk's data, and a trailer
 * section whose fields are checked (no blank in a name, no field RFC 9110 §6.5.1 forbids) and
 * dropped.
 */
#include <string.h>

#include "ferry_http.h"
#include "ferry_http_int.h"

enum { S_SIZE, S_EXT, S_SIZE_LF, S_DATA, S_DATA_CR, S_DATA_LF, S_TRAILER, S_DONE };

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * The trailer section at t[0 .. len): its length once it is whole (0 while it is not), or -1
 * when a field is refused. fasthttp's header scanner reads it: a line starting with a blank
 * continues the field above unless it holds a colon, an empty name is skipped, a name with a
 * blank or a forbidden name refuses the body; values are not checked.
 */
static long trailer_section(const unsigned char *t, size_t len)
{
	size_t p = 0;
	bool bad = false;
	if (len > 0 && t[0] == '0') {
		/* fasthttp's parseTrailer skips three bytes when the section starts with '0' */
		if (len < 3) {
			return 0;
		}
		p = 3;
	}
	for (;;) {
		if (p >= len) {
			return 0;
		}
		if (t[p] == '\n' || (t[p] == '\r' && p + 1 < len && t[p + 1] == '\n')) {
			p += t[p] == '\n' ? 1 : 2;
			return bad ? -1 : (long)p;
		}
		const unsigned char *lf = memchr(t + p, '\n', len - p);
		if (!lf) {
			return 0;
		}
		size_t end = (size_t)(lf - t);
		const unsigned char *colon = memchr(t + p, ':', end - p);
		if (!colon && t[p] != ' ' && t[p] != '\t') {
			/* a line without a colon: fasthttp takes a name up to the next colon, and
			 * refuses it when a line ends first, or waits for one (more bytes, its buffer
			 * full, or the client gone) */
			if (memchr(lf, ':', len - end)) {
				return -1;
			}
			return 0;
		} else if (colon) if (colon > t + p) {
			size_t klen = (size_t)(colon - t) - p;
			bad |= memchr(t + p, ' ', klen) || memchr(t + p, '\t', klen)
				|| ferry_http_bad_trailer((const char *)t + p, klen);
		}
		p = end + 1;
	}
}

ferry_http_status ferry_http_chunked_decode(ferry_http_chunked *c, char *buf, size_t len, uint64_t max_body,
	size_t *consumed, size_t *produced)
{
	unsigned char *b = (unsigned char *)buf;
	size_t i = 0, out = 0;
	*consumed = *produced = 0;
	ferry_http_status s = FERRY_HTTP_NEED_MORE;
	while (i < len && c->state != S_DONE && s == FERRY_HTTP_NEED_MORE) {
		switch (c->state) {
		case S_SIZE: {
			int d = hexval(b[i]);
			if (d < 0) {
				if (c->line == 0) {
					s = FERRY_HTTP_BAD_REQUEST; /* no size */
					break;
				}
				c->state = S_EXT; /* this byte is looked at again there */
				continue;
			}
			if (c->line == 15) {
				s = FERRY_HTTP_BAD_REQUEST; /* fasthttp's maxHexIntChars */
				break;
			}
			c->size = c->size << 4 | (uint64_t)d;
			c->line++, i++;
			break;
		}
		case S_EXT: {
			/* chunk extensions are skipped, whatever their bytes, as the front skips them */
			const unsigned char *cr = memchr(b + i, '\r', len - i), *nl = memchr(b + i, '\n', len - i);
			if (nl && (!cr || nl < cr)) {
				i = (size_t)(nl - b);
				s = FERRY_HTTP_BAD_REQUEST;
				break;
			}
			if (!cr) {
				i = len;
				break;
			}
			i = (size_t)(cr - b) + 1;
			c->state = S_SIZE_LF;
			break;
		}
		case S_SIZE_LF:
			if (b[i] != '\n') {
				s = FERRY_HTTP_BAD_REQUEST;
				break;
			}
			i++;
			if (c->size == 0) {
				c->state = S_TRAILER;
				break;
			}
			if (max_body && (c->size > max_body || c->total + c->size > max_body)) {
				s = FERRY_HTTP_PAYLOAD_TOO_LARGE;
				break;
			}
			c->state = S_DATA;
			c->line = 0;
			break;
		case S_DATA: {
			size_t n = len - i < c->size ? len - i : (size_t)c->size;
			memmove(b + out, b + i, n);
			out += n, i += n;
			c->size -= n, c->total += n;
			if (c->size == 0) {
				c->state = S_DATA_CR;
			}
			break;
		}
		case S_DATA_CR:
		case S_DATA_LF:
			if (b[i] != (c->state == S_DATA_CR ? '\r' : '\n')) {
				s = FERRY_HTTP_BAD_REQUEST;
				break;
			}
			i++;
			c->state = c->state == S_DATA_CR ? S_DATA_LF : S_SIZE;
			break;
		case S_TRAILER: {
			/* judged whole: the caller keeps the section's start and calls again with more */
			size_t max = c->max_trailer ? c->max_trailer : (size_t)1 << 20;
			size_t n = len - i < max ? len - i : max;
			long end = trailer_section(b + i, n);
			if (end < 0 || (end == 0 && len - i >= max)) {
				s = FERRY_HTTP_BAD_REQUEST;
				break;
			}
			if (end == 0) {
				*consumed = i, *produced = out;
				return FERRY_HTTP_NEED_MORE;
			}
			i += (size_t)end;
			c->state = S_DONE;
			break;
		}
		}
	}
	/* on a refusal, consumed is where the fault lies */
	*consumed = i, *produced = out;
	return s != FERRY_HTTP_NEED_MORE ? s : c->state == S_DONE ? FERRY_HTTP_OK : FERRY_HTTP_NEED_MORE;
}

bool ferry_http_chunked_in_trailer(const ferry_http_chunked *c)
{
	return c->state == S_TRAILER;
}
