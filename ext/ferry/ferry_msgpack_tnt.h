/*
 * Tarantool's MP_DATETIME (ext 4) and MP_INTERVAL (ext 6) payloads in plain C (no Zend API),
 * so the code that reads them from the wire is fuzzed alone (fuzz/msgpack_fuzz.c). The
 * readers accept exactly what php/msgpack's DatetimeExtension and IntervalExtension accept:
 * an input either is refused by both or decodes to the same fields, because the C decoder
 * builds the PHP object itself only for what it accepts and leaves the rest (and the
 * exception to raise) to the PHP code.
 */
#ifndef FERRY_MSGPACK_TNT_H
#define FERRY_MSGPACK_TNT_H

#include <stdint.h>

#if defined(__GNUC__)
# define FMP_HIDDEN __attribute__((visibility("hidden")))
#else
# define FMP_HIDDEN
#endif

/* Tarantool's datetime_validate() bounds (src/lib/core/datetime.h). */
#define FMP_DT_MIN_SECONDS (-185604722870400LL)
#define FMP_DT_MAX_SECONDS 185480451417600LL
#define FMP_DT_MAX_NSEC 1999999999
#define FMP_DT_MIN_TZOFFSET (-720)
#define FMP_DT_MAX_TZOFFSET 840
#define FMP_DT_MAX_TZINDEX 1024

typedef struct {
	int64_t seconds;
	int32_t nsec;
	int16_t tzoffset;
	int16_t tzindex;
} fmp_datetime;

/* Field ids of MP_INTERVAL: year, month, week, day, hour, minute, second, nanosecond, adjust. */
#define FMP_IV_FIELDS 9
#define FMP_IV_ADJUST 8
/* count byte + 9 × (id byte + int64 at most 9 bytes) */
#define FMP_IV_MAX_PAYLOAD (1 + FMP_IV_FIELDS * 10)

typedef struct {
	int64_t f[FMP_IV_FIELDS];
} fmp_interval;

/* 1 and *out set when p[0..n) is a datetime Tarantool accepts, else 0. */
FMP_HIDDEN int fmp_datetime_read(const uint8_t *p, uint32_t n, fmp_datetime *out);
/* 0 when d is out of bounds, else the payload length written to out (8 or 16). */
FMP_HIDDEN uint32_t fmp_datetime_write(const fmp_datetime *d, uint8_t out[16]);

/* 1 when the payload is an interval (every field in range, none twice, no trailing bytes). */
FMP_HIDDEN int fmp_interval_read(const uint8_t *p, uint32_t n, fmp_interval *out);
/* 0 when a field is out of range, else the payload length written (non-zero fields, in id
 * order, smallest int encodings). */
FMP_HIDDEN uint32_t fmp_interval_write(const fmp_interval *iv, uint8_t out[FMP_IV_MAX_PAYLOAD]);

#endif
