/*
 * What ferry_multipart.c and ferry_multipart_ct.c share: Go's string functions as
 * internal/multipart and mime.ParseMediaType use them. Go's TrimSpace, ToLower and
 * EqualFold work on Unicode runes, so the few non-ASCII runes that change what an ASCII
 * comparison decides are handled here (a client can send them; the front reads them so).
 */
#ifndef FERRY_MULTIPART_INT_H
#define FERRY_MULTIPART_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* length of the unicode.IsSpace rune at s (before end), 0 when there is none */
size_t mp_space_at(const char *s, const char *end);
/* strings.TrimSpace on [*s, *e) */
void mp_trim_space(const char **s, const char **e);
/* strings.ToLower(s) == lit, lit lower-case ASCII */
bool mp_lower_eq(const char *s, size_t n, const char *lit);
/* strings.EqualFold(s, lit), lit lower-case ASCII */
bool mp_fold_eq(const char *s, size_t n, const char *lit);
/* the ASCII byte unicode.ToLower maps the rune at s to (*n its length), or -1 */
int mp_lower_ascii(const char *s, const char *end, size_t *n);
/* the same, reading the rune that ends at end (start bounds the look back) */
int mp_lower_ascii_last(const char *start, const char *end, size_t *n);

/* internal/multipart.forbidden: name's base (less trailing dots and spaces) ends in one of
 * forbid, NULL-terminated */
bool mp_forbidden(const char *name, size_t len, const char *const *forbid);
/* a new file in dir (NULL or "": $TMPDIR, /tmp): its descriptor and *path (malloc'd), or -1 */
int mp_create(const char *dir, char **path);
bool mp_write_all(int fd, const char *p, size_t n);

/* strconv.IsPrint (ferry_multipart_print.c, generated from Go's tables) */
bool mp_printable(int32_t r);

/* Go's %q of s (strconv.Quote) into a buffer of the parser's: NULL when out of memory */
const char *mp_message_name(const char *fmt_head, const char *s, size_t n, const char *fmt_tail);

#endif
