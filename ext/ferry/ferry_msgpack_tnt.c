/* See ferry_msgpack_tnt.h. Layouts per Tarantool's box protocol documentation
 * (doc/dev_guide/internals/msgpack_extensions.rst): datetime little-endian fixed fields,
 * interval a count byte and (id byte, MessagePack int) pairs. */
#include <string.h>

#include "ferry_msgpack_read.h"
#include "ferry_msgpack_tnt.h"

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--) {
		v = (v << 8) | p[i];
	}
	return v;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++) {
		p[i] = (uint8_t) (v & 0xff);
		v >>= 8;
	}
}

static int datetime_ok(const fmp_datetime *d)
{
	return d->seconds >= FMP_DT_MIN_SECONDS && d->seconds <= FMP_DT_MAX_SECONDS
		&& d->nsec >= 0 && d->nsec <= FMP_DT_MAX_NSEC
		&& d->tzoffset >= FMP_DT_MIN_TZOFFSET && d->tzoffset <= FMP_DT_MAX_TZOFFSET
		&& d->tzindex >= 0 && d->tzindex <= FMP_DT_MAX_TZINDEX;
}

int fmp_datetime_read(const uint8_t *p, uint32_t n, fmp_datetime *out)
{
	if (n != 8 && n != 16) {
		return 0;
	}
	fmp_datetime d = {0};
	d.seconds = (int64_t) le(p, 8);
	if (n == 16) {
		d.nsec = (int32_t) (uint32_t) le(p + 8, 4);
		d.tzoffset = (int16_t) (uint16_t) le(p + 12, 2);
		d.tzindex = (int16_t) (uint16_t) le(p + 14, 2);
	}
	if (!datetime_ok(&d)) {
		return 0;
	}
	*out = d;
	return 1;
}

uint32_t fmp_datetime_write(const fmp_datetime *d, uint8_t out[16])
{
	if (!datetime_ok(d)) {
		return 0;
	}
	put_le(out, (uint64_t) d->seconds, 8);
	if (d->nsec == 0 && d->tzoffset == 0 && d->tzindex == 0) {
		return 8;
	}
	put_le(out + 8, (uint32_t) d->nsec, 4);
	put_le(out + 12, (uint16_t) d->tzoffset, 2);
	put_le(out + 14, (uint16_t) d->tzindex, 2);
	return 16;
}

/* year, month, week and nanosecond are int32 on the wire; adjust 0..2; the rest int64 */
static int field_ok(int id, int64_t v)
{
	if (id == FMP_IV_ADJUST) {
		return v >= 0 && v <= 2;
	}
	if (id <= 2 || id == 7) {
		return v >= INT32_MIN && v <= INT32_MAX;
	}
	return 1;
}

int fmp_interval_read(const uint8_t *p, uint32_t n, fmp_interval *out)
{
	if (n < 1) {
		return 0;
	}
	fmp_interval iv;
	memset(&iv, 0, sizeof iv);
	unsigned seen = 0;
	uint32_t count = p[0];
	size_t off = 1;
	for (uint32_t k = 0; k < count; k++) {
		if (off >= n) {
			return 0;
		}
		uint8_t id = p[off++];
		if (id >= FMP_IV_FIELDS || (seen & (1u << id)) || off >= n) {
			return 0;
		}
		fmp_item it;
		if (fmp_read(p, n, off, &it) != FMP_OK) {
			return 0;
		}
		int64_t v;
		if (it.kind == FMP_UINT && it.v.u <= (uint64_t) INT64_MAX) {
			v = (int64_t) it.v.u;
		} else if (it.kind == FMP_INT) {
			v = it.v.i;
		} else {
			return 0;
		}
		if (!field_ok(id, v)) {
			return 0;
		}
		iv.f[id] = v;
		seen |= 1u << id;
		off += it.head;
	}
	if (off != n) {
		return 0;
	}
	*out = iv;
	return 1;
}

/* Packer::packInt(): the smallest encoding */
static uint32_t put_int(uint8_t *p, int64_t v)
{
	if (v >= 0) {
		if (v < 0x80) {
			p[0] = (uint8_t) v;
			return 1;
		}
		int w = v <= 0xff ? 1 : v <= 0xffff ? 2 : v <= 0xffffffffLL ? 4 : 8;
		p[0] = (uint8_t) (w == 1 ? 0xcc : w == 2 ? 0xcd : w == 4 ? 0xce : 0xcf);
		for (int i = 0; i < w; i++) {
			p[w - i] = (uint8_t) ((uint64_t) v >> (8 * i));
		}
		return 1 + (uint32_t) w;
	}
	if (v >= -0x20) {
		p[0] = (uint8_t) (v & 0xff);
		return 1;
	}
	int w = v >= -0x80 ? 1 : v >= -0x8000 ? 2 : v >= -0x80000000LL ? 4 : 8;
	p[0] = (uint8_t) (w == 1 ? 0xd0 : w == 2 ? 0xd1 : w == 4 ? 0xd2 : 0xd3);
	for (int i = 0; i < w; i++) {
		p[w - i] = (uint8_t) ((uint64_t) v >> (8 * i));
	}
	return 1 + (uint32_t) w;
}

uint32_t fmp_interval_write(const fmp_interval *iv, uint8_t out[FMP_IV_MAX_PAYLOAD])
{
	uint32_t len = 1;
	uint8_t count = 0;
	for (int id = 0; id < FMP_IV_FIELDS; id++) {
		int64_t v = iv->f[id];
		if (!field_ok(id, v)) {
			return 0;
		}
		if (v != 0) {
			out[len++] = (uint8_t) id;
			len += put_int(out + len, v);
			count++;
		}
	}
	out[0] = count;
	return len;
}
