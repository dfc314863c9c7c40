/*
 * multipart/form-data for direct mode: what the Go front's internal/multipart does for a
 * request it serves (fields as name/value pairs, file parts spooled to files of their own,
 * the same limits and refusals), so that a direct-mode worker gives PHP the same form,
 * files and errors. Plain C: the parsed parts come out through callbacks.
 */
#ifndef FERRY_MULTIPART_H
#define FERRY_MULTIPART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* internal/multipart.Limits, field by field. The front fills them from server.uploads (dir,
 * max_files, max_parts, max_part_header_size, forbid) and gives both byte totals
 * server.max_body_size (cmd/ferry/options.go, gateway.New's defaults): with those, only the
 * counts, the part headers and the extensions can refuse a body that was read whole. */
typedef struct {
	const char *dir;          /* where file parts are spooled; NULL or "": $TMPDIR, else /tmp */
	int max_files;            /* PHP max_file_uploads; 0: no file part allowed */
	int max_parts;
	int max_header_bytes;     /* one part's header block */
	int64_t max_disk_bytes;   /* total bytes written to disk */
	int64_t max_field_bytes;  /* total bytes of field values kept */
	const char *const *forbid; /* refused file name extensions (".php"), NULL-terminated; NULL: none */
} ferry_multipart_limits;

typedef struct {
	/* a field: name and value point into a buffer valid during the call */
	void (*field)(void *ctx, const char *name, size_t name_len, const char *value, size_t value_len);
	/* a file part, spooled to path (empty path and UPLOAD_ERR_NO_FILE for an empty file input);
	 * name is as the client sent it (directories included) */
	void (*file)(void *ctx, const char *field, size_t field_len, const char *name, size_t name_len,
		const char *type, size_t type_len, const char *path, int error, int64_t size);
	void *ctx;
} ferry_multipart_sink;

/*
 * The boundary of a multipart/form-data Content-Type value (internal/multipart.Boundary):
 * false when the value names no usable one (the body then reaches PHP unparsed, as the
 * front leaves it). The front parses it whatever the method (ferryproto's ParsesMultipart).
 * *boundary is a static buffer valid until the next call (quoting and RFC 2231 encodings
 * make it differ from the bytes sent); one longer than 70 bytes comes out as its first 71,
 * which ferry_multipart_parse refuses as the front does.
 */
bool ferry_multipart_boundary(const char *content_type, size_t len, const char **boundary, size_t *boundary_len);

/*
 * Parses body into the sink. 0 on success; otherwise the HTTP status the front answers
 * (400 malformed or over a count limit or a refused extension, 413 over a byte limit,
 * 500 a file that could not be written), *error the text of the front's answer (without
 * its final line end; static, valid until the next call). The sink hears of each part as
 * it is parsed: on a failure what it got is void, and the files already spooled are removed.
 */
int ferry_multipart_parse(const char *body, size_t len, const char *boundary, size_t boundary_len,
	const ferry_multipart_limits *limits, const ferry_multipart_sink *sink, const char **error);

#endif
