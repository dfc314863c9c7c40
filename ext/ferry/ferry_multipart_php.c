/*
 * PHP face of ferry_multipart*.c, for tests only: Ferry\Ext\multipart_parse() lets the phpt
 * suite and cmd/ferry/direct_multipart_e2e_test.go put bodies through the C parser and
 * compare what it makes of them with what the Go front gives PHP.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "php_ferry.h"
#include "ferry_multipart.h"

static void on_field(void *ctx, const char *name, size_t name_len, const char *value, size_t value_len)
{
	zval pair;
	array_init_size(&pair, 2);
	add_next_index_stringl(&pair, name, name_len);
	add_next_index_stringl(&pair, value, value_len);
	add_next_index_zval(&((zval *)ctx)[0], &pair);
}

static void on_file(void *ctx, const char *field, size_t field_len, const char *name, size_t name_len,
	const char *type, size_t type_len, const char *path, int error, int64_t size)
{
	zval f;
	array_init_size(&f, 6);
	add_next_index_stringl(&f, field, field_len);
	add_next_index_stringl(&f, name, name_len);
	add_next_index_stringl(&f, type, type_len);
	add_next_index_string(&f, path);
	add_next_index_long(&f, error);
	add_next_index_long(&f, (zend_long)size);
	add_next_index_zval(&((zval *)ctx)[1], &f);
}

static zend_long limit(HashTable *limits, const char *key, zend_long dflt)
{
	zval *v = zend_hash_str_find(limits, key, strlen(key));
	return v ? zval_get_long(v) : dflt;
}

/* multipart_parse(string $contentType, string $body, array $limits): array
 * $limits: dir, max_files, max_parts, max_header_bytes, max_disk_bytes, max_field_bytes
 * (ferry_multipart_limits; defaults the front's) and forbid (a list of extensions).
 * Returns status (0: parsed), error, form [[name, value]...], files [[field, name, type,
 * path, error, size]...] (left on disk for the caller) and multipart (false: the
 * Content-Type names no boundary, and the front leaves such a body unparsed). */
ZEND_FUNCTION(ferry_multipart_parse)
{
	zend_string *ct, *body;
	HashTable *limits;
	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_STR(ct)
		Z_PARAM_STR(body)
		Z_PARAM_ARRAY_HT(limits)
	ZEND_PARSE_PARAMETERS_END();

	zval *dir = zend_hash_str_find(limits, "dir", 3);
	zval *forbid = zend_hash_str_find(limits, "forbid", 6);
	const char **exts = NULL;
	if (forbid && Z_TYPE_P(forbid) == IS_ARRAY) {
		HashTable *fh = Z_ARRVAL_P(forbid);
		exts = safe_emalloc(zend_hash_num_elements(fh) + 1, sizeof *exts, 0);
		size_t n = 0;
		zval *e;
		ZEND_HASH_FOREACH_VAL(fh, e) {
			if (Z_TYPE_P(e) == IS_STRING) {
				exts[n++] = Z_STRVAL_P(e);
			}
		} ZEND_HASH_FOREACH_END();
		exts[n] = NULL;
	}
	ferry_multipart_limits lim = {
		.dir = dir && Z_TYPE_P(dir) == IS_STRING ? Z_STRVAL_P(dir) : NULL,
		.max_files = (int)limit(limits, "max_files", 20),
		.max_parts = (int)limit(limits, "max_parts", 1000),
		.max_header_bytes = (int)limit(limits, "max_header_bytes", 16 << 10),
		.max_disk_bytes = limit(limits, "max_disk_bytes", 8 << 20),
		.max_field_bytes = limit(limits, "max_field_bytes", 8 << 20),
		.forbid = exts,
	};

	zval lists[2];
	array_init(&lists[0]);
	array_init(&lists[1]);
	const char *boundary, *error = NULL;
	size_t boundary_len;
	int status = 0;
	bool multipart = ferry_multipart_boundary(ZSTR_VAL(ct), ZSTR_LEN(ct), &boundary, &boundary_len);
	if (multipart) {
		ferry_multipart_sink sink = {.field = on_field, .file = on_file, .ctx = lists};
		status = ferry_multipart_parse(ZSTR_VAL(body), ZSTR_LEN(body), boundary, boundary_len, &lim, &sink, &error);
	}
	if (exts) {
		efree(exts);
	}
	if (status != 0) { /* what the sink got is void: its files are gone */
		zval_ptr_dtor(&lists[0]);
		zval_ptr_dtor(&lists[1]);
		array_init(&lists[0]);
		array_init(&lists[1]);
	}
	array_init(return_value);
	add_assoc_long(return_value, "status", status);
	if (error) {
		add_assoc_string(return_value, "error", error);
	} else {
		add_assoc_null(return_value, "error");
	}
	add_assoc_zval(return_value, "form", &lists[0]);
	add_assoc_zval(return_value, "files", &lists[1]);
	add_assoc_bool(return_value, "multipart", multipart);
}
