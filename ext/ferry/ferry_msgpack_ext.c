/*
 * Tarantool's common ext values decoded in C: timestamp (-1), decimal (1) and uuid (2),
 * but only when the registered extension is php/msgpack's own (TimestampExtension,
 * DecimalExtension, UuidExtension: final classes) and only for well-formed payloads. The
 * object is then built as that extension's unpack() would build it. Anything else (a
 * custom extension, an error stack, a payload the PHP code would reject) goes to the PHP
 * extension, which decodes it or raises its exact exception.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "ferry_msgpack.h"

static uint64_t be(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++) {
		v = (v << 8) | p[i];
	}
	return v;
}

/* new $cls with its declared properties set directly, as the class's own (private)
 * constructor would; 0 if the class is not shaped as expected. The class and property
 * slots are looked up once per msgpack_unpack() call (cache). */
static int build(fmp_ext_cache *cache, int which, zval *rv, const char *cls, int count, const char **names, zval *values)
{
	fmp_ext_class *c = &cache->cls[which];
	if (c->state == 0) {
		c->state = -1;
		zend_string *name = zend_strpprintf(0, "Ferry\\MsgPack\\Ext\\%s", cls);
		zend_class_entry *ce = zend_lookup_class(name);
		zend_string_release(name);
		if (!ce || ce->default_properties_count != count) {
			return 0;
		}
		for (int i = 0; i < count; i++) {
			zend_property_info *pi = zend_hash_str_find_ptr(&ce->properties_info, names[i], strlen(names[i]));
			if (!pi || (pi->flags & ZEND_ACC_STATIC)) {
				return 0;
			}
			c->offset[i] = pi->offset;
		}
		c->ce = ce;
		c->state = 1;
	}
	if (c->state < 0 || object_init_ex(rv, c->ce) != SUCCESS) {
		return 0;
	}
	for (int i = 0; i < count; i++) {
		ZVAL_COPY(OBJ_PROP(Z_OBJ_P(rv), c->offset[i]), &values[i]);
	}
	return 1;
}

static int timestamp(fmp_ext_cache *cache, const uint8_t *p, uint32_t n, zval *rv)
{
	int64_t s;
	uint64_t ns = 0;
	if (n == 4) {
		s = (int64_t) be(p, 4);
	} else if (n == 8) {
		uint64_t v = be(p, 8);
		ns = v >> 34;
		s = (int64_t) (v & 0x3ffffffffull);
	} else if (n == 12) {
		ns = be(p, 4);
		s = (int64_t) be(p + 4, 8);
	} else {
		return 0;
	}
	if (ns > 999999999) {
		return 0;
	}
	static const char *names[] = {"seconds", "nanoseconds"};
	zval v[2];
	ZVAL_LONG(&v[0], s);
	ZVAL_LONG(&v[1], (zend_long) ns);
	return build(cache, 0, rv, "Timestamp", 2, names, v);
}

static int uuid(fmp_ext_cache *cache, const uint8_t *p, uint32_t n, zval *rv)
{
	if (n != 16) {
		return 0;
	}
	static const char *names[] = {"bytes"};
	zval v;
	ZVAL_STRINGL(&v, (const char *) p, 16);
	int r = build(cache, 2, rv, "Uuid", 1, names, &v);
	zval_ptr_dtor(&v);
	return r;
}

#define DECIMAL_MAX_DIGITS 38
#define DECIMAL_MAX_SCALE 1000

static int decimal(fmp_ext_cache *cache, const uint8_t *p, uint32_t n, zval *rv)
{
	/* the scale: any MessagePack int that fits a PHP int */
	int64_t scale;
	uint32_t k;
	uint8_t c = n ? p[0] : 0xc1;
	if (c < 0x80) {
		scale = c;
		k = 1;
	} else if (c >= 0xe0) {
		scale = (int64_t) c - 0x100;
		k = 1;
	} else if (c >= 0xcc && c <= 0xd3) {
		int w = 1 << ((c - 0xcc) & 3);
		if (n < 1u + (uint32_t) w) {
			return 0;
		}
		uint64_t u = be(p + 1, w);
		if (c <= 0xcf) {
			if (u > (uint64_t) INT64_MAX) {
				return 0;
			}
			scale = (int64_t) u;
		} else {
			int shift = 64 - 8 * w;
			scale = (int64_t) (u << shift) >> shift;
		}
		k = 1 + (uint32_t) w;
	} else {
		return 0;
	}
	if (n - k < 1 || scale > DECIMAL_MAX_SCALE || scale < -DECIMAL_MAX_SCALE) {
		return 0;
	}
	const uint8_t *bcd = p + k;
	uint32_t m = n - k, nibbles = 2 * m - 1;
	uint8_t sign = bcd[m - 1] & 0x0f;
	bool negative;
	if (sign == 0x0b || sign == 0x0d) {
		negative = true;
	} else if (sign == 0x0a || sign == 0x0c || sign == 0x0e || sign == 0x0f) {
		negative = false;
	} else {
		return 0;
	}
	char digits[DECIMAL_MAX_DIGITS];
	uint32_t len = 0;
	for (uint32_t i = 0; i < nibbles; i++) {
		uint8_t d = (i & 1) ? (bcd[i >> 1] & 0x0f) : (bcd[i >> 1] >> 4);
		if (d > 9) {
			return 0;
		}
		if (len == 0 && d == 0) {
			continue; /* leading zero */
		}
		if (len == DECIMAL_MAX_DIGITS) {
			return 0;
		}
		digits[len++] = (char) ('0' + d);
	}
	if (len == 0) {
		digits[len++] = '0';
		negative = false;
	}
	static const char *names[] = {"negative", "digits", "scale"};
	zval v[3];
	ZVAL_BOOL(&v[0], negative);
	ZVAL_STRINGL_FAST(&v[1], digits, len);
	ZVAL_LONG(&v[2], (zend_long) scale);
	int r = build(cache, 1, rv, "Decimal", 3, names, v);
	zval_ptr_dtor(&v[1]);
	return r;
}

int ferry_msgpack_ext_native(fmp_ext_cache *cache, zval *handler, int8_t type, const uint8_t *payload, uint32_t n, zval *rv)
{
	if (Z_TYPE_P(handler) != IS_OBJECT) {
		return 0;
	}
	zend_string *cls = Z_OBJCE_P(handler)->name;
	switch (type) {
	case -1:
		return zend_string_equals_literal(cls, "Ferry\\MsgPack\\Ext\\TimestampExtension") ? timestamp(cache, payload, n, rv) : 0;
	case 1:
		return zend_string_equals_literal(cls, "Ferry\\MsgPack\\Ext\\DecimalExtension") ? decimal(cache, payload, n, rv) : 0;
	case 2:
		return zend_string_equals_literal(cls, "Ferry\\MsgPack\\Ext\\UuidExtension") ? uuid(cache, payload, n, rv) : 0;
	}
	return 0;
}
