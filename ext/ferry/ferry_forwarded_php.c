/*
 * PHP face of ferry_forwarded.c, for tests: the direct-mode answer to trusted_proxies
 * for one request, so that cmd/ferry/direct_forwarded_e2e_test.go can hold it against
 * the Go front's for the same headers. The worker's event loop calls the C directly.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "php_ferry.h"
#include "ferry_forwarded.h"

/* What ferry_http.c leaves of a field value: no SP or HTAB at either end. */
static void trim_ows(const char **s, size_t *n)
{
	while (*n > 0 && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t')) {
		(*n)--;
	}
}

/* Ferry\Ext\forwarded_client(array $trusted, string $peer, array $fields, string $host): array */
ZEND_FUNCTION(ferry_forwarded_client)
{
	HashTable *trusted_ht, *fields_ht;
	zend_string *peer, *host;
	ZEND_PARSE_PARAMETERS_START(4, 4)
		Z_PARAM_ARRAY_HT(trusted_ht)
		Z_PARAM_STR(peer)
		Z_PARAM_ARRAY_HT(fields_ht)
		Z_PARAM_STR(host)
	ZEND_PARSE_PARAMETERS_END();

	uint32_t nets_n = zend_hash_num_elements(trusted_ht), fields_n = zend_hash_num_elements(fields_ht);
	ferry_cidr *nets = safe_emalloc(nets_n ? nets_n : 1, sizeof(ferry_cidr), 0);
	ferry_http_field *fields = safe_emalloc(fields_n ? fields_n : 1, sizeof(ferry_http_field), 0);
	ferry_trusted t = {nets, 0};
	ferry_http_request r;
	memset(&r, 0, sizeof(r));
	r.fields = fields;
	r.field_slots = fields_n;
	r.host = ZSTR_VAL(host);
	r.host_len = ZSTR_LEN(host);
	r.content_length = -1;

	zval *entry;
	ZEND_HASH_FOREACH_VAL(trusted_ht, entry) {
		if (Z_TYPE_P(entry) != IS_STRING || !ferry_trusted_parse(Z_STRVAL_P(entry), Z_STRLEN_P(entry), &nets[t.count])) {
			zend_argument_value_error(1, "entry %zu must be a CIDR (10.0.0.0/8) or an address", t.count);
			goto out;
		}
		t.count++;
	} ZEND_HASH_FOREACH_END();

	ZEND_HASH_FOREACH_VAL(fields_ht, entry) {
		zval *name, *value;
		ZVAL_DEREF(entry);
		if (Z_TYPE_P(entry) != IS_ARRAY || !(name = zend_hash_index_find(Z_ARRVAL_P(entry), 0))
			|| !(value = zend_hash_index_find(Z_ARRVAL_P(entry), 1))
			|| Z_TYPE_P(name) != IS_STRING || Z_TYPE_P(value) != IS_STRING) {
			zend_argument_value_error(3, "must be a list of [string $name, string $value]");
			goto out;
		}
		ferry_http_field *f = &fields[r.field_count++];
		f->name = Z_STRVAL_P(name);
		f->name_len = Z_STRLEN_P(name);
		f->value = Z_STRVAL_P(value);
		f->value_len = Z_STRLEN_P(value);
		trim_ows(&f->value, &f->value_len);
	} ZEND_HASH_FOREACH_END();

	ferry_client c;
	ferry_forwarded_client(&t, &r, ZSTR_VAL(peer), &c);
	array_init_size(return_value, 3);
	add_assoc_string(return_value, "remote", c.remote);
	add_assoc_stringl(return_value, "host", c.host, c.host_len);
	add_assoc_bool(return_value, "https", c.https);
out:
	efree(nets);
	efree(fields);
}
