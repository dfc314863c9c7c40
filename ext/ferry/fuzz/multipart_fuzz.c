/*
 * libFuzzer target for direct mode's multipart parser (ferry_multipart*.c).
 * Input: 1 byte picking the limits, 1 byte the length of a Content-Type value, that value,
 * then the body. The Content-Type goes through ferry_multipart_boundary(); when it names
 * no boundary the body is parsed with "xYzZY", so that every input reaches the parser.
 * Files are spooled into a directory of this process's own, emptied after each input.
 * Checks, beyond what ASan/UBSan/LSan catch (body and Content-Type are exact-size heap
 * copies):
 *  - a boundary is 1 to 71 bytes; the status is 0, 400, 413 or 500, with a text iff not 0;
 *  - every field value lies in the body; fields and files stay within the limits' counts
 *    and byte totals; each file reported exists with the reported size (an empty file
 *    input: no path, UPLOAD_ERR_NO_FILE, size 0);
 *  - nothing else is left in the directory: on a failure, not even the reported files.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../ferry_multipart.h"

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); abort(); } } while (0)

typedef struct {
	const char *body;
	size_t len;
	const ferry_multipart_limits *lim;
	int fields, files, parts;
	int64_t field_bytes, disk;
	char paths[64][512];
	int npaths;
} seen;

static void on_field(void *ctx, const char *name, size_t name_len, const char *value, size_t value_len)
{
	seen *s = ctx;
	CHECK(value >= s->body && value_len <= s->len && value <= s->body + s->len - value_len);
	volatile char x = 0;
	for (size_t i = 0; i < name_len; i++) {
		x ^= name[i];
	}
	(void)x;
	s->fields++, s->parts++;
	s->field_bytes += (int64_t)value_len;
}

static void on_file(void *ctx, const char *field, size_t field_len, const char *name, size_t name_len,
	const char *type, size_t type_len, const char *path, int error, int64_t size)
{
	seen *s = ctx;
	volatile char x = 0;
	for (size_t i = 0; i < field_len; i++) {
		x ^= field[i];
	}
	for (size_t i = 0; i < name_len; i++) {
		x ^= name[i];
	}
	for (size_t i = 0; i < type_len; i++) {
		x ^= type[i];
	}
	(void)x;
	CHECK(field_len > 0);
	s->parts++;
	if (error == 4) {
		CHECK(path[0] == '\0' && size == 0 && name_len == 0);
		return;
	}
	CHECK(error == 0 && path[0] != '\0' && name_len > 0);
	struct stat st;
	CHECK(stat(path, &st) == 0 && st.st_size == size && (st.st_mode & 0777) == 0600);
	s->files++;
	s->disk += size;
	CHECK(s->npaths < 64 && strlen(path) < sizeof s->paths[0]);
	strcpy(s->paths[s->npaths++], path);
}

static char dir[64];

static int entries(void)
{
	DIR *d = opendir(dir);
	CHECK(d != NULL);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	}
	closedir(d);
	return n;
}

static void cleanup(void)
{
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		strcpy(dir, "/tmp/ferry-multipart-fuzz-XXXXXX");
		CHECK(mkdtemp(dir) != NULL);
		atexit(cleanup);
	}
	if (size < 2) {
		return 0;
	}
	uint8_t sel = data[0];
	size_t ct_len = data[1] <= size - 2 ? data[1] : size - 2;
	data += 2, size -= 2;
	char *ct = malloc(ct_len ? ct_len : 1), *body = malloc(size - ct_len ? size - ct_len : 1);
	memcpy(ct, data, ct_len);
	memcpy(body, data + ct_len, size - ct_len);
	size_t len = size - ct_len;

	static const char *const forbid[] = {".php", ".PHAR", "", NULL};
	static const int64_t bytes[] = {0, 7, 64, 1 << 20};
	ferry_multipart_limits lim = {
		.dir = dir, .max_files = (sel & 3) == 3 ? 20 : sel & 3, .max_parts = (sel & 4) ? 3 : 1000,
		.max_header_bytes = (sel & 8) ? 64 : 16 << 10, .max_disk_bytes = bytes[(sel >> 4) & 3],
		.max_field_bytes = bytes[(sel >> 6) & 3], .forbid = (sel & 0x20) ? forbid : NULL,
	};
	const char *boundary = "xYzZY";
	size_t blen = 5;
	const char *b;
	size_t bl;
	if (ferry_multipart_boundary(ct, ct_len, &b, &bl)) {
		CHECK(bl >= 1 && bl <= 71);
		boundary = b, blen = bl;
	}
	seen s = {.body = body, .len = len, .lim = &lim};
	ferry_multipart_sink sink = {.field = on_field, .file = on_file, .ctx = &s};
	const char *error = NULL;
	int st = ferry_multipart_parse(body, len, boundary, blen, &lim, &sink, &error);
	CHECK(st == 0 || st == 400 || st == 413 || st == 500);
	CHECK((st == 0) == (error == NULL));
	if (error) {
		CHECK(strlen(error) > 0);
	}
	if (st == 0) {
		CHECK(s.parts <= lim.max_parts && s.files <= lim.max_files);
		CHECK(s.disk <= lim.max_disk_bytes && s.field_bytes <= lim.max_field_bytes);
		CHECK(entries() == s.npaths);
		for (int i = 0; i < s.npaths; i++) {
			CHECK(unlink(s.paths[i]) == 0);
		}
	}
	CHECK(entries() == 0);
	free(ct);
	free(body);
	return 0;
}
