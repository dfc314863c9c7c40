/*
 * Tarantool's common ext values decoded in C: timestamp (-1), decimal (1), uuid (2),
 * datetime (4) and interval (6), but only when the registered extension is php/msgpack's
 * own (TimestampExtension, DecimalExtension, ...: final classes) and only for well-formed
 * payloads. The object is then built as that extension's unpack() would build it. Anything else (a
 * custom extension, an error stack, a payload the PHP code would reject) goes to the PHP
 * extension, which decodes it or raises its exact exception.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "ferry_msgpack.h"
#include "ferry_msgpack_tnt.h"

static uint64_t be(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++) {
		v = (v << 8) | p[i];
	}
	return v;
}

/* php/msgpack's value classes and their declared properties, in constructor order. */
static const struct {
	const char *name;
	int count;
	const char *props[9];
} classes[FMP_CLS_COUNT] = {
	[FMP_CLS_TIMESTAMP] = {"Timestamp", 2, {"seconds", "nanoseconds"}},
	[FMP_CLS_DECIMAL] = {"Decimal", 3, {"negative", "digits", "scale"}},
	[FMP_CLS_UUID] = {"Uuid", 1, {"bytes"}},
	[FMP_CLS_DATETIME] = {"Datetime", 4, {"seconds", "nanoseconds", "tzoffset", "tzindex"}},
	[FMP_CLS_INTERVAL] = {"Interval", 9, {"year", "month", "week", "day", "hour", "minute", "second", "nanosecond", "adjust"}},
};

fmp_ext_class *ferry_msgpack_ext_class(fmp_ext_cache *cache, int which)
{
	fmp_ext_class *c = &cache->cls[which];
	if (c->state == 0) {
		c->state = -1;
		int count = classes[which].count;
		zend_string *name = zend_strpprintf(0, "Ferry\\MsgPack\\Ext\\%s", classes[which].name);
		zend_class_entry *ce = zend_lookup_class(name);
		zend_string_release(name);
		if (!ce || ce->default_properties_count != count) {
			return NULL;
		}
		for (int i = 0; i < count; i++) {
			const char *prop = classes[which].props[i];
			zend_property_info *pi = zend_hash_str_find_ptr(&ce->properties_info, prop, strlen(prop));
			if (!pi || (pi->flags & ZEND_ACC_STATIC)) {
				return NULL;
			}
			c->offset[i] = pi->offset;
		}
		c->ce = ce;
		c->state = 1;
	}
	return c->state > 0 ? c : NULL;
}

/* new $cls with its declared properties set directly, as the class's own (private)
 * constructor would; 0 if the class is not shaped as expected. */
static int build(fmp_ext_cache *cache, int which, zval *rv, zval *values)
{
	fmp_ext_class *c = ferry_msgpack_ext_class(cache, which);
	if (!c || object_init_ex(rv, c->ce) != SUCCESS) {
		return 0;
	}
	for (int i = 0; i < classes[which].count; i++) {
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
	zval v[2];
	ZVAL_LONG(&v[0], s);
	ZVAL_LONG(&v[1], (zend_long) ns);
	return build(cache, FMP_CLS_TIMESTAMP, rv, v);
}

static int uuid(fmp_ext_cache *cache, const uint8_t *p, uint32_t n, zval *rv)
{
	if (n != 16) {
		return 0;
	}
	zval v;
	ZVAL_STRINGL(&v, (const char *) p, 16);
	int r = build(cache, FMP_CLS_UUID, rv, &v);
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
	zval v[3];
	ZVAL_BOOL(&v[0], negative);
	ZVAL_STRINGL_FAST(&v[1], digits, len);
	ZVAL_LONG(&v[2], (zend_long) scale);
	int r = build(cache, FMP_CLS_DECIMAL, rv, v);
	zval_ptr_dtor(&v[1]);
	return r;
}

static int datetime(fmp_ext_cache *cache, const uint8_t *p, uint32_t n, zval *rv)
{
	fmp_datetime d;
	if (!fmp_datetime_read(p, n, &d)) {
		return 0;
	}
	zval v[4];
	ZVAL_LONG(&v[0], (zend_long) d.seconds);
	ZVAL_LONG(&v[1], d.nsec);
	ZVAL_LONG(&v[2], d.tzoffset);
	ZVAL_LONG(&v[3], d.tzindex);
	return build(cache, FMP_CLS_DATETIME, rv, v);
}

static int interval(fmp_ext_cache *cache, const uint8_t *p, uint32_t n, zval *rv)
{
	fmp_interval iv;
	if (!fmp_interval_read(p, n, &iv)) {
		return 0;
	}
	zval v[FMP_IV_FIELDS];
	for (int i = 0; i < FMP_IV_FIELDS; i++) {
		ZVAL_LONG(&v[i], (zend_long) iv.f[i]);
	}
	return build(cache, FMP_CLS_INTERVAL, rv, v);
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
	case 4:
		return zend_string_equals_literal(cls, "Ferry\\MsgPack\\Ext\\DatetimeExtension") ? datetime(cache, payload, n, rv) : 0;
	case 6:
		return zend_string_equals_literal(cls, "Ferry\\MsgPack\\Ext\\IntervalExtension") ? interval(cache, payload, n, rv) : 0;
	}
	return 0;
}
