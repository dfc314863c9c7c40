/*
 * ferry_multipart_parse(): internal/multipart.Read for a body a direct-mode worker holds
 * whole. Every verdict is the Go reader's, including where its 64 KiB buffer decides one
 * (a delimiter's transport padding must end within it) and which error wins when two
 * could (a byte limit is met while content streams, before the body turns out cut short).
 * Fields point into the body; each file part is written as its part is found, to a file
 * named and created as os.CreateTemp creates it.
 */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE /* memmem */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ferry_multipart.h"
#include "ferry_multipart_int.h"

#define GO_BUFFER 65536 /* internal/multipart's read buffer */

enum { D_UNSURE, D_NOT, D_NEXT, D_CLOSE };
enum { MP_OK = 0, MP_MALFORMED = -1 };

typedef struct {
	const char *body;
	size_t len;
	char delim[74]; /* "\n--" + boundary */
	size_t dlen;
	const ferry_multipart_limits *lim;
	char **paths; /* files made, removed on failure */
	int npaths, cap;
	char *scratch; /* unquoted name and filename of the part at hand */
	size_t scratch_cap;
} mp;

typedef struct {
	const char *name, *filename, *ctype;
	size_t name_len, filename_len, ctype_len;
	bool is_file;
} part_header;

/* delimLine: what follows "--boundary" */
static int delim_line(const char *b, const char *end, size_t *n)
{
	if (end - b >= 2 && b[0] == '-' && b[1] == '-') {
		*n = 2;
		return D_CLOSE;
	}
	const char *r = b;
	while (r < end && (*r == ' ' || *r == '\t')) {
		r++;
	}
	size_t pad = (size_t)(r - b);
	if (r < end && *r == '\n') {
		*n = pad + 1;
		return D_NEXT;
	}
	if (end - r >= 2 && r[0] == '\r' && r[1] == '\n') {
		*n = pad + 2;
		return D_NEXT;
	}
	if (r == end || (end - r == 1 && *r == '\r') || (pad == 0 && end - r == 1 && *r == '-')) {
		return D_UNSURE;
	}
	return D_NOT;
}

/*
 * The content of the part starting at offset s: [s, *content_end), the next part (or the
 * epilogue) at *next, *last after the close delimiter. On a malformed body, *content_end
 * is where the Go reader had passed content on to its limits when it found out.
 * first: the preamble, which Go reads behind a line end of its own (a delimiter may open
 * the body); that byte takes a place in its buffer.
 */
static int scan(const mp *m, size_t s, bool first, size_t *content_end, size_t *next, bool *last)
{
	const char *b = m->body;
	size_t from = s;
	int kind;
	if (first && m->len >= m->dlen - 1 && memcmp(b, m->delim + 1, m->dlen - 1) == 0) {
		size_t n, wend = GO_BUFFER - 1 < m->len ? GO_BUFFER - 1 : m->len;
		switch (kind = delim_line(b + m->dlen - 1, b + (wend > m->dlen - 1 ? wend : m->dlen - 1), &n)) {
		case D_NEXT:
		case D_CLOSE:
			*content_end = 0;
			*next = m->dlen - 1 + n;
			*last = kind == D_CLOSE;
			return MP_OK;
		case D_UNSURE:
			*content_end = 0;
			return MP_MALFORMED;
		}
	}
	for (;;) {
		const char *i = memmem(b + from, m->len - from, m->delim, m->dlen);
		if (!i) {
			*content_end = m->len - s > m->dlen ? m->len - m->dlen : s;
			return MP_MALFORMED;
		}
		size_t at = (size_t)(i - b), e = at > s && b[at - 1] == '\r' ? at - 1 : at;
		size_t wend = e + GO_BUFFER < m->len ? e + GO_BUFFER : m->len, n;
		switch (kind = delim_line(i + m->dlen, b + wend, &n)) {
		case D_NEXT:
		case D_CLOSE:
			*content_end = e;
			*next = at + m->dlen + n;
			*last = kind == D_CLOSE;
			return MP_OK;
		case D_NOT:
			from = at + 1;
			continue;
		}
		*content_end = e; /* padding past Go's buffer, or cut short in the delimiter line */
		return MP_MALFORMED;
	}
}

static int fail_limit(mp *m, const char *what, int64_t limit, const char **error, int status)
{
	static char msg[96]; /* valid until the next call, as ferry_multipart.h says */
	snprintf(msg, sizeof msg, "multipart: more %s than the limit of %lld", what, (long long)limit);
	*error = msg;
	return status;
}

/* unquote: PHP's escapes only (\\ and \"), into o; *rest after the parameter */
static bool unquote(const char *s, const char *end, char *o, size_t *n, const char **rest)
{
	*n = 0;
	for (; s < end; s++) {
		if (*s == '"') {
			const char *r = s + 1;
			while (r < end && (*r == ' ' || *r == '\t')) {
				r++;
			}
			if (r < end && *r != ';') {
				return false; /* text after a quoted parameter */
			}
			*rest = r;
			return true;
		}
		if (*s == '\\' && s + 1 < end && (s[1] == '\\' || s[1] == '"')) {
			s++;
		}
		o[(*n)++] = *s;
	}
	return false; /* unterminated quoted parameter */
}

/* disposition: name and filename of a form-data Content-Disposition value */
static int disposition(mp *m, const char *v, const char *end, part_header *h)
{
	const char *semi = memchr(v, ';', (size_t)(end - v));
	const char *ts = v, *te = semi ? semi : end;
	mp_trim_space(&ts, &te);
	if (!mp_fold_eq(ts, (size_t)(te - ts), "form-data")) {
		return MP_OK;
	}
	size_t need = (size_t)(end - v) + 1;
	if (need > m->scratch_cap) {
		char *s = realloc(m->scratch, need);
		if (!s) {
			return 500;
		}
		m->scratch = s, m->scratch_cap = need;
	}
	size_t used = 0;
	bool have_name = false;
	for (const char *s = semi ? semi : end;;) {
		while (s < end && (*s == ' ' || *s == '\t' || *s == ';')) {
			s++;
		}
		if (s == end) {
			break;
		}
		const char *eq = s;
		while (eq < end && *eq != '=' && *eq != ';') {
			eq++;
		}
		if (eq == end || *eq == ';') { /* a parameter without value */
			s = eq;
			continue;
		}
		const char *ks = s, *ke = eq;
		mp_trim_space(&ks, &ke);
		const char *val = eq + 1;
		while (val < end && (*val == ' ' || *val == '\t')) {
			val++;
		}
		const char *vs, *ve;
		bool quoted = val < end && *val == '"';
		if (quoted) {
			size_t n;
			if (!unquote(val + 1, end, m->scratch + used, &n, &s)) {
				return MP_MALFORMED;
			}
			vs = m->scratch + used, ve = vs + n;
		} else {
			const char *c = memchr(val, ';', (size_t)(end - val));
			vs = val, ve = c ? c : end;
			s = c ? c + 1 : end;
			mp_trim_space(&vs, &ve);
		}
		bool is_name = mp_lower_eq(ks, (size_t)(ke - ks), "name");
		if (is_name || mp_lower_eq(ks, (size_t)(ke - ks), "filename")) {
			if (is_name ? have_name : h->is_file) {
				return MP_MALFORMED; /* two name (or filename) parameters */
			}
			if (quoted) {
				used += (size_t)(ve - vs); /* the unquoted value stays */
			}
			if (is_name) {
				h->name = vs, h->name_len = (size_t)(ve - vs), have_name = true;
			} else {
				h->filename = vs, h->filename_len = (size_t)(ve - vs), h->is_file = true;
			}
		}
	}
	return MP_OK;
}

/* header: a part's header block at *pos, at most limit bytes with its line ends */
static int header(mp *m, size_t *pos, part_header *h, const char **error)
{
	const char *b = m->body, *cd = NULL, *cd_end = NULL;
	bool have_ct = false;
	int64_t total = 0, limit = m->lim->max_header_bytes;
	for (;;) {
		const char *l = b + *pos, *nl = memchr(l, '\n', m->len - *pos);
		if (!nl) {
			if ((total += (int64_t)(m->len - *pos)) > limit) {
				return fail_limit(m, "part header bytes", limit, error, 400);
			}
			return MP_MALFORMED; /* part header cut short */
		}
		if ((total += nl - l + 1) > limit) {
			return fail_limit(m, "part header bytes", limit, error, 400);
		}
		*pos = (size_t)(nl + 1 - b);
		const char *le = nl > l && nl[-1] == '\r' ? nl - 1 : nl;
		if (memchr(l, '\0', (size_t)(le - l))) {
			return MP_MALFORMED;
		}
		if (le == l) {
			break;
		}
		/* A name with blanks, and so a folded line (RFC 7578 has none), is refused. */
		const char *colon = memchr(l, ':', (size_t)(le - l));
		if (!colon || colon == l || memchr(l, ' ', (size_t)(colon - l)) || memchr(l, '\t', (size_t)(colon - l))) {
			return MP_MALFORMED;
		}
		const char *vs = colon + 1, *ve = le;
		mp_trim_space(&vs, &ve);
		if (!cd && mp_fold_eq(l, (size_t)(colon - l), "content-disposition")) {
			cd = vs, cd_end = ve;
		} else if (!have_ct && mp_fold_eq(l, (size_t)(colon - l), "content-type")) {
			h->ctype = vs, h->ctype_len = (size_t)(ve - vs), have_ct = true;
		}
	}
	return cd ? disposition(m, cd, cd_end, h) : MP_OK;
}

static int parse(mp *m, const ferry_multipart_sink *sink, const char **error)
{
	const ferry_multipart_limits *lim = m->lim;
	size_t pos = 0, end, next;
	bool last;
	int parts = 0, nfiles = 0, st;
	int64_t disk = 0, fields = 0;
	if (scan(m, 0, true, &end, &next, &last) != MP_OK) {
		return MP_MALFORMED;
	}
	for (pos = next; !last; pos = next) {
		if (++parts > lim->max_parts) {
			return fail_limit(m, "parts", lim->max_parts, error, 400);
		}
		part_header h = {0};
		if ((st = header(m, &pos, &h, error)) != MP_OK) {
			return st;
		}
		st = scan(m, pos, false, &end, &next, &last);
		int64_t n = (int64_t)(end - pos);
		if (h.name_len == 0) {
			if (st != MP_OK) {
				return st;
			}
		} else if (!h.is_file) {
			if ((fields += n) > lim->max_field_bytes) {
				return fail_limit(m, "field bytes", lim->max_field_bytes, error, 413);
			}
			if (st != MP_OK) {
				return st;
			}
			sink->field(sink->ctx, h.name, h.name_len, m->body + pos, (size_t)n);
		} else if (h.filename_len == 0) {
			if (st != MP_OK) {
				return st;
			}
			sink->file(sink->ctx, h.name, h.name_len, "", 0, "", 0, "", 4, 0);
		} else {
			if (mp_forbidden(h.filename, h.filename_len, lim->forbid)) {
				*error = mp_message_name("multipart: file name ", h.filename, h.filename_len, " has a refused extension");
				if (!*error) {
					*error = "uploads could not be stored";
					return 500;
				}
				return 400;
			}
			if (++nfiles > lim->max_files) {
				return fail_limit(m, "files", lim->max_files, error, 400);
			}
			if (m->npaths == m->cap) {
				char **grown = realloc(m->paths, (size_t)(m->cap * 2 + 8) * sizeof *grown);
				if (!grown) {
					return 500;
				}
				m->paths = grown, m->cap = m->cap * 2 + 8;
			}
			char *path;
			int fd = mp_create(lim->dir, &path);
			if (fd < 0) {
				return 500;
			}
			m->paths[m->npaths++] = path;
			/* Go refuses before writing the piece that would pass the limit, so a body cut
			 * short after content within it is malformed, past it over the limit. */
			if (disk + n > lim->max_disk_bytes) {
				close(fd);
				return fail_limit(m, "file bytes", lim->max_disk_bytes, error, 413);
			}
			/* Go has written what it passed on before it finds the body cut short: a disk that
			 * fails there makes it a 500 too. */
			bool ok = mp_write_all(fd, m->body + pos, (size_t)n);
			if (close(fd) != 0 || !ok) {
				return 500;
			}
			if (st != MP_OK) {
				return st;
			}
			disk += n;
			sink->file(sink->ctx, h.name, h.name_len, h.filename, h.filename_len, h.ctype ? h.ctype : "",
				h.ctype_len, path, 0, n);
		}
	}
	return MP_OK;
}

int ferry_multipart_parse(const char *body, size_t len, const char *boundary, size_t boundary_len,
	const ferry_multipart_limits *limits, const ferry_multipart_sink *sink, const char **error)
{
	*error = "malformed multipart body";
	if (boundary_len == 0 || boundary_len > 70) { /* RFC 2046 section 5.1.1 */
		return 400;
	}
	mp m = {.body = body, .len = len, .dlen = boundary_len + 3, .lim = limits};
	memcpy(m.delim, "\n--", 3);
	memcpy(m.delim + 3, boundary, boundary_len);
	int st = parse(&m, sink, error);
	if (st == MP_MALFORMED) {
		*error = "malformed multipart body";
		st = 400;
	} else if (st == 500) {
		*error = "uploads could not be stored";
	} else if (st == MP_OK) {
		*error = NULL;
	}
	for (int i = 0; i < m.npaths; i++) {
		if (st != MP_OK) {
			unlink(m.paths[i]);
		}
		free(m.paths[i]);
	}
	free(m.paths);
	free(m.scratch);
	return st;
}
