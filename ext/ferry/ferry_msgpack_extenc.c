/*
 * msgpack_pack()'s C path for php/msgpack's Timestamp, Decimal, Uuid, Datetime and
 * Interval objects: the bytes TimestampExtension::pack() & co. produce, without the
 * callback into the Packer. Only when the Packer's class map sends the object's class to
 * php/msgpack's own extension for it and the object's properties have the types its
 * constructor guarantees; anything else (a custom extension for the class, an object made
 * without its constructor) is left to the Packer, which packs it or raises its error.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_smart_str.h"
#include "ferry_msgpack.h"
#include "ferry_msgpack_tnt.h"

static const struct {
	const char *value;
	const char *ext;
	int8_t type;
	int props;
} own[FMP_CLS_COUNT] = {
	[FMP_CLS_TIMESTAMP] = {"Ferry\\MsgPack\\Ext\\Timestamp", "Ferry\\MsgPack\\Ext\\TimestampExtension", -1, 2},
	[FMP_CLS_DECIMAL] = {"Ferry\\MsgPack\\Ext\\Decimal", "Ferry\\MsgPack\\Ext\\DecimalExtension", 1, 3},
	[FMP_CLS_UUID] = {"Ferry\\MsgPack\\Ext\\Uuid", "Ferry\\MsgPack\\Ext\\UuidExtension", 2, 1},
	[FMP_CLS_DATETIME] = {"Ferry\\MsgPack\\Ext\\Datetime", "Ferry\\MsgPack\\Ext\\DatetimeExtension", 4, 4},
	[FMP_CLS_INTERVAL] = {"Ferry\\MsgPack\\Ext\\Interval", "Ferry\\MsgPack\\Ext\\IntervalExtension", 6, FMP_IV_FIELDS},
};

static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--) {
		p[i] = (uint8_t) (v & 0xff);
		v >>= 8;
	}
}

/* Packer::packInt() */
static uint32_t put_int(uint8_t *p, int64_t v)
{
	int w;
	if (v >= 0 && v < 0x80) {
		p[0] = (uint8_t) v;
		return 1;
	}
	if (v < 0 && v >= -0x20) {
		p[0] = (uint8_t) (v & 0xff);
		return 1;
	}
	if (v >= 0) {
		w = v <= 0xff ? 1 : v <= 0xffff ? 2 : v <= 0xffffffffLL ? 4 : 8;
		p[0] = (uint8_t) (w == 1 ? 0xcc : w == 2 ? 0xcd : w == 4 ? 0xce : 0xcf);
	} else {
		w = v >= -0x80 ? 1 : v >= -0x8000 ? 2 : v >= -0x80000000LL ? 4 : 8;
		p[0] = (uint8_t) (w == 1 ? 0xd0 : w == 2 ? 0xd1 : w == 4 ? 0xd2 : 0xd3);
	}
	put_be(p + 1, (uint64_t) v, w);
	return 1 + (uint32_t) w;
}

static int timestamp(zval *props, uint8_t *out, uint32_t *n)
{
	int64_t s = Z_LVAL(props[0]), ns = Z_LVAL(props[1]);
	if (ns < 0 || ns > 999999999) {
		return 0;
	}
	if (s >= 0 && s < 0x400000000LL) {
		if (ns == 0 && s <= 0xffffffffLL) {
			put_be(out, (uint64_t) s, 4);
			*n = 4;
		} else {
			put_be(out, ((uint64_t) ns << 34) | (uint64_t) s, 8);
			*n = 8;
		}
	} else {
		put_be(out, (uint64_t) ns, 4);
		put_be(out + 4, (uint64_t) s, 8);
		*n = 12;
	}
	return 1;
}

#define DECIMAL_MAX_DIGITS 38

static int decimal(zval *props, uint8_t *out, uint32_t *n)
{
	if ((Z_TYPE(props[0]) != IS_TRUE && Z_TYPE(props[0]) != IS_FALSE) || Z_TYPE(props[1]) != IS_STRING
		|| Z_TYPE(props[2]) != IS_LONG) {
		return 0;
	}
	const char *digits = Z_STRVAL(props[1]);
	size_t len = Z_STRLEN(props[1]);
	if (len == 0 || len > DECIMAL_MAX_DIGITS) {
		return 0;
	}
	uint8_t nib[DECIMAL_MAX_DIGITS + 2];
	size_t k = 0;
	if ((len + 1) % 2) {
		nib[k++] = 0; /* the leading 0 nibble of an even digit count */
	}
	for (size_t i = 0; i < len; i++) {
		if (digits[i] < '0' || digits[i] > '9') {
			return 0;
		}
		nib[k++] = (uint8_t) (digits[i] - '0');
	}
	nib[k++] = Z_TYPE(props[0]) == IS_TRUE ? 0x0d : 0x0c;
	uint32_t w = put_int(out, Z_LVAL(props[2]));
	for (size_t i = 0; i < k; i += 2) {
		out[w++] = (uint8_t) ((nib[i] << 4) | nib[i + 1]);
	}
	*n = w;
	return 1;
}

static int longs(zval *props, int count)
{
	for (int i = 0; i < count; i++) {
		if (Z_TYPE(props[i]) != IS_LONG) {
			return 0;
		}
	}
	return 1;
}

static int datetime(zval *props, uint8_t *out, uint32_t *n)
{
	zend_long nsec = Z_LVAL(props[1]), tzo = Z_LVAL(props[2]), tzi = Z_LVAL(props[3]);
	/* the struct's narrow fields must not truncate what the writer then checks */
	if (nsec < INT32_MIN || nsec > INT32_MAX || tzo < INT16_MIN || tzo > INT16_MAX || tzi < INT16_MIN || tzi > INT16_MAX) {
		return 0;
	}
	fmp_datetime d = {.seconds = Z_LVAL(props[0]), .nsec = (int32_t) nsec, .tzoffset = (int16_t) tzo, .tzindex = (int16_t) tzi};
	*n = fmp_datetime_write(&d, out);
	return *n != 0;
}

static int interval(zval *props, uint8_t *out, uint32_t *n)
{
	fmp_interval iv;
	for (int i = 0; i < FMP_IV_FIELDS; i++) {
		iv.f[i] = Z_LVAL(props[i]);
	}
	*n = fmp_interval_write(&iv, out);
	return *n != 0;
}

int ferry_msgpack_ext_pack(fmp_ext_cache *cache, HashTable *by_class, zend_object *obj, smart_str *s)
{
	zval *handler = zend_hash_find(by_class, obj->ce->name);
	if (!handler || Z_TYPE_P(handler) != IS_OBJECT) {
		return 0;
	}
	int which = -1;
	for (int i = 0; i < FMP_CLS_COUNT; i++) {
		if (zend_string_equals_cstr(obj->ce->name, own[i].value, strlen(own[i].value))) {
			which = i;
			break;
		}
	}
	if (which < 0 || !zend_string_equals_cstr(Z_OBJCE_P(handler)->name, own[which].ext, strlen(own[which].ext))) {
		return 0;
	}
	fmp_ext_class *c = ferry_msgpack_ext_class(cache, which);
	if (!c || c->ce != obj->ce) {
		return 0;
	}
	zval props[FMP_IV_FIELDS];
	for (int i = 0; i < FMP_IV_FIELDS; i++) {
		if (i < own[which].props) {
			ZVAL_COPY_VALUE(&props[i], OBJ_PROP(obj, c->offset[i]));
		} else {
			ZVAL_UNDEF(&props[i]);
		}
	}
	uint8_t payload[FMP_IV_MAX_PAYLOAD];
	uint32_t n = 0;
	int ok;
	switch (which) {
	case FMP_CLS_TIMESTAMP: ok = longs(props, 2) && timestamp(props, payload, &n); break;
	case FMP_CLS_DECIMAL: ok = decimal(props, payload, &n); break;
	case FMP_CLS_UUID:
		ok = Z_TYPE(props[0]) == IS_STRING && Z_STRLEN(props[0]) == 16;
		if (ok) {
			memcpy(payload, Z_STRVAL(props[0]), 16);
			n = 16;
		}
		break;
	case FMP_CLS_DATETIME: ok = longs(props, 4) && datetime(props, payload, &n); break;
	default: ok = longs(props, FMP_IV_FIELDS) && interval(props, payload, &n); break;
	}
	if (!ok) {
		return 0;
	}
	/* Packer::packExt(): fixext for the sizes that have one */
	uint8_t head[3];
	uint32_t h;
	switch (n) {
	case 1: head[0] = 0xd4; h = 1; break;
	case 2: head[0] = 0xd5; h = 1; break;
	case 4: head[0] = 0xd6; h = 1; break;
	case 8: head[0] = 0xd7; h = 1; break;
	case 16: head[0] = 0xd8; h = 1; break;
	default: head[0] = 0xc7; head[1] = (uint8_t) n; h = 2; break; /* payloads here are < 256 bytes */
	}
	head[h++] = (uint8_t) own[which].type;
	smart_str_appendl(s, (const char *) head, h);
	smart_str_appendl(s, (const char *) payload, n);
	return 1;
}
