/* What ferry_http.c, ferry_http_grammar.c and ferry_http_chunked.c share; not for callers. */
#ifndef FERRY_HTTP_INT_H
#define FERRY_HTTP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ferry_http_tchar: a header field name's or method's byte (RFC 9110 tchar) */
#define FH_TCHAR 1
/* a field value's byte: HTAB, SP to '~', obs-text (fasthttp's validHeaderValueByte) */
#define FH_VALUE 2
extern const uint8_t ferry_http_tchar[256];

/* ferry_http_uri: the classes of internal/gateway/grammar.go's uriClass, bit for bit */
#define FU_PCHAR 1
#define FU_TOLERATED 2
#define FU_HEX 4
#define FU_REGNAME 8
#define FU_PATHFAST 16
#define FU_NAMEFAST 32
#define FU_QUERY 64
extern const uint8_t ferry_http_uri[256];

/* RFC 9112 §3.2's forms, as grammar.go's parseTarget returns them */
enum { FH_FORM_INVALID, FH_FORM_ORIGIN, FH_FORM_ABSOLUTE, FH_FORM_AUTHORITY, FH_FORM_ASTERISK };

int ferry_http_target_form(const char *method, size_t mlen, const char *t, size_t tlen,
	const char **authority, size_t *alen, const char **rest, size_t *rlen);
bool ferry_http_valid_host(const char *h, size_t len, bool need_port);

/* a name compared without case with lower, which is lower case */
bool ferry_http_eq_fold(const char *a, size_t alen, const char *lower, size_t llen);
/* Trailer's comma list names no forbidden field (fasthttp's AddTrailerBytes) */
bool ferry_http_trailer_list_ok(const char *v, size_t len);
/* a Connection value's comma list holds keep-alive (fasthttp's hasHeaderValue) */
bool ferry_http_has_keep_alive(const char *v, size_t len);
/* fasthttp's isBadTrailer: a field name no Trailer field may announce and no trailer may carry */
bool ferry_http_bad_trailer(const char *k, size_t len);
/* an obs-folded value [v, v+len) unfolded in place as fasthttp does it; returns the new length */
size_t ferry_http_unfold(char *v, size_t len);
/* whether a (possibly folded) value's bytes are all field-value bytes, line breaks aside */
bool ferry_http_folded_value_ok(const unsigned char *v, size_t len);

#endif
