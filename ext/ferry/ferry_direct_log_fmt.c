/*
 * The access log's line, byte for byte as the Go front writes it (internal/observe
 * accesslog.go: appendJSON and appendCombined, and jsonq.Append's JSON strings), so that a
 * log pipeline cannot tell which mode served a request. The fields a request brings are
 * formatted once it is whole; the status, sizes and times are put around them when it has
 * been answered.
 *
 * One difference, for the pipe's sake: a line must fit in PIPE_BUF to reach the server whole,
 * so the request's own fields are cut, at a character's end, past FIELD_* bytes as written.
 * The front never cuts; no real browser or proxy sends fields that long.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "php.h"
#include "zend_smart_str.h"
#include "ferry_direct_log_int.h"

static const char hex[] = "0123456789abcdef";

/* The length of the valid UTF-8 sequence at s (Go's utf8.DecodeRune's verdict), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0) {
			lo = 0xa0;
		} else if (c == 0xed) {
			hi = 0x9f; /* no surrogates */
		}
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0) {
			lo = 0x90;
		} else if (c == 0xf4) {
			hi = 0x8f; /* nothing past U+10FFFF */
		}
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi) {
		return 0;
	}
	for (size_t i = 2; i < len; i++) {
		if (s[i] < 0x80 || s[i] > 0xbf) {
			return 0;
		}
	}
	return len;
}

/* jsonq.Append: quotes, backslashes and controls escaped, invalid UTF-8 as U+FFFD; at most budget bytes inside the quotes. */
void ferry_dlog_json_str(smart_str *out, const char *str, size_t n, size_t budget)
{
	const unsigned char *s = (const unsigned char *) str;
	size_t used = 0;
	smart_str_appendc(out, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		char tmp[6];
		const char *put = tmp;
		size_t len, take = 1;
		if (c < 0x80) {
			if (c == '"' || c == '\\') {
				tmp[0] = '\\';
				tmp[1] = (char) c;
				len = 2;
			} else if (c < 0x20 || c == 0x7f) {
				memcpy(tmp, "\\u00", 4);
				tmp[4] = hex[c >> 4];
				tmp[5] = hex[c & 15];
				len = 6;
			} else {
				tmp[0] = (char) c;
				len = 1;
			}
		} else if ((take = utf8_len(s + i, n - i)) > 0) {
			put = str + i;
			len = take;
		} else {
			put = "\\ufffd";
			len = 6;
			take = 1;
		}
		if (used + len > budget) {
			break;
		}
		smart_str_appendl(out, put, len);
		used += len;
		i += take;
	}
	smart_str_appendc(out, '"');
}

/* appendEscaped: the combined format's quoted fields, as nginx writes them; "-" when empty. */
void ferry_dlog_escaped(smart_str *out, const char *str, size_t n, size_t budget)
{
	const unsigned char *s = (const unsigned char *) str;
	if (n == 0) {
		smart_str_appendc(out, '-');
		return;
	}
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
			if (used + 4 > budget) {
				break;
			}
			char tmp[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
			smart_str_appendl(out, tmp, 4);
			used += 4;
		} else {
			if (used + 1 > budget) {
				break;
			}
			smart_str_appendc(out, (char) c);
			used++;
		}
	}
}

static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

void ferry_dlog_fields(smart_str *out, size_t *split, bool json, const ferry_dlog_text *t)
{
	char when[64];
	struct tm tm;
	if (json) {
		/* Go's "2006-01-02T15:04:05.000000Z07:00" in UTC: the fraction cut, not rounded */
		gmtime_r(&t->start.tv_sec, &tm);
		snprintf(when, sizeof(when), "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			tm.tm_hour, tm.tm_min, tm.tm_sec, (long) (t->start.tv_nsec / 1000));
		smart_str_appendl(out, "{\"time\":\"", 9);
		smart_str_appends(out, when);
		smart_str_appendl(out, "\",\"request_id\":", 15);
		ferry_dlog_json_str(out, t->id, t->id_len, FERRY_REQUEST_ID_MAX);
		smart_str_appendl(out, ",\"remote\":", 10);
		ferry_dlog_json_str(out, t->remote, t->remote_len, 64);
		smart_str_appendl(out, ",\"method\":", 10);
		ferry_dlog_json_str(out, t->method, t->method_len, FIELD_METHOD);
		smart_str_appendl(out, ",\"uri\":", 7);
		ferry_dlog_json_str(out, t->uri, t->uri_len, FIELD_URI);
		smart_str_appendl(out, ",\"proto\":", 9);
		ferry_dlog_json_str(out, t->proto, t->proto_len, 16);
		smart_str_appendl(out, ",\"status\":", 10);
		*split = ZSTR_LEN(out->s);
		smart_str_appendl(out, ",\"referer\":", 11);
		ferry_dlog_json_str(out, t->referer, t->referer_len, FIELD_REFERER);
		smart_str_appendl(out, ",\"user_agent\":", 14);
		ferry_dlog_json_str(out, t->ua, t->ua_len, FIELD_UA);
		smart_str_appendl(out, "}\n", 2);
		return;
	}
	/* Go's "02/Jan/2006:15:04:05 -0700" in the local zone */
	localtime_r(&t->start.tv_sec, &tm);
	long off = tm.tm_gmtoff / 60;
	char sign = off < 0 ? '-' : '+';
	off = off < 0 ? -off : off;
	snprintf(when, sizeof(when), "%02d/%s/%04d:%02d:%02d:%02d %c%02ld%02ld", tm.tm_mday, months[tm.tm_mon % 12],
		tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec, sign, off / 60, off % 60);
	smart_str_appendl(out, t->remote, t->remote_len);
	smart_str_appendl(out, " - - [", 6);
	smart_str_appends(out, when);
	smart_str_appendl(out, "] \"", 3);
	ferry_dlog_escaped(out, t->method, t->method_len, FIELD_METHOD);
	smart_str_appendc(out, ' ');
	ferry_dlog_escaped(out, t->uri, t->uri_len, FIELD_URI);
	smart_str_appendc(out, ' ');
	ferry_dlog_escaped(out, t->proto, t->proto_len, 16);
	smart_str_appendl(out, "\" ", 2);
	*split = ZSTR_LEN(out->s);
	smart_str_appendl(out, " \"", 2);
	ferry_dlog_escaped(out, t->referer, t->referer_len, FIELD_REFERER);
	smart_str_appendl(out, "\" \"", 3);
	ferry_dlog_escaped(out, t->ua, t->ua_len, FIELD_UA);
	smart_str_appendl(out, "\" ", 2);
	if (t->id_len == 0) {
		smart_str_appendc(out, '-');
	} else {
		smart_str_appendl(out, t->id, t->id_len); /* validated: safe bytes only */
	}
	smart_str_appendc(out, ' ');
}

/* strconv.AppendFloat(d.Seconds(), 'f', 6, 64), from nanoseconds. */
static size_t seconds(char *dst, size_t cap, uint64_t ns)
{
	uint64_t us = (ns + 500) / 1000;
	return (size_t) snprintf(dst, cap, "%llu.%06llu", (unsigned long long) (us / 1000000), (unsigned long long) (us % 1000000));
}

size_t ferry_dlog_line(char *dst, size_t cap, bool json, const char *fields, size_t len, size_t split, const ferry_dlog_end *e)
{
	char mid[192], dur[32], wait[32], php[32];
	seconds(dur, sizeof(dur), e->duration);
	seconds(wait, sizeof(wait), e->wait);
	seconds(php, sizeof(php), e->php);
	int n, m = 0;
	char last[160];
	if (json) {
		n = snprintf(mid, sizeof(mid), "%d,\"bytes\":%lld,\"duration\":%s,\"queue_wait\":%s,\"php\":%s,\"pid\":%ld",
			e->status, (long long) e->bytes, dur, wait, php, (long) e->pid);
	} else {
		n = snprintf(mid, sizeof(mid), "%d %lld", e->status, (long long) e->bytes);
		char pid[24] = "-";
		if (e->pid) {
			snprintf(pid, sizeof(pid), "%ld", (long) e->pid);
		}
		m = snprintf(last, sizeof(last), "%s %s %s %s\n", dur, wait, php, pid);
	}
	size_t total = len + (size_t) n + (size_t) m;
	if (n < 0 || m < 0 || total > cap) {
		return 0;
	}
	memcpy(dst, fields, split);
	memcpy(dst + split, mid, (size_t) n);
	memcpy(dst + split + n, fields + split, len - split);
	memcpy(dst + len + n, last, (size_t) m);
	return total;
}
