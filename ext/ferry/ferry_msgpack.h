#ifndef FERRY_MSGPACK_H
#define FERRY_MSGPACK_H

#include "php.h"
#include "zend_smart_str.h"

/* Both codecs recurse on the C stack once per container level (the decoder about 400 bytes
 * a level: 1024 levels fit well in a Fiber's default 2 MiB stack); php/msgpack uses them only
 * up to this depth and decodes deeper limits in PHP (whose calls do not use the C stack). */
#define FERRY_MSGPACK_MAX_DEPTH 1024

/* msgpack_unpack() flags, as php/msgpack's BufferUnpacker passes them. */
#define FERRY_MP_BIGINT_MASK 0x3 /* 0 decimal string, 1 GMP, 2 float */
#define FERRY_MP_BIN_OBJECT 0x4

/* msgpack_pack() flags, as php/msgpack's Packer passes them. */
#define FERRY_MP_FORCE_BIN 0x01
#define FERRY_MP_FORCE_ARR 0x04
#define FERRY_MP_FORCE_MAP 0x08
#define FERRY_MP_FLOAT32 0x10
#define FERRY_MP_TOP_ARRAY 0x20 /* packArray(): the value is an array, keys dropped */
#define FERRY_MP_TOP_MAP 0x40   /* packMap() */

/* ferry_msgpack_dec.c: decodes the value at *pos of buf's first len bytes (what
 * msgpack_unpack() does once its arguments are checked) and moves *pos after it. On FAILURE
 * an exception is thrown, and *missing (when not NULL) is the InsufficientData's missing
 * count if the decoder threw one itself, -1 otherwise. */
typedef struct {
	zend_long base;
	zend_long flags;
	zend_long max_depth; /* 1..FERRY_MSGPACK_MAX_DEPTH */
	HashTable *ext;
	zval *cb;
} fmp_dec_opts;
zend_result ferry_msgpack_decode(zend_string *buf, size_t len, size_t *pos, const fmp_dec_opts *o, zval *rv, zend_long *missing);

/* ferry_msgpack_php.c: throws new Ferry\MsgPack\<cls>($reason, $offset[, $missing]). */
void ferry_msgpack_throw(const char *cls, zend_string *reason, zend_long offset, zend_long missing);
/* new $cls(...$args) for php/msgpack's value classes; FAILURE with an exception thrown. */
zend_result ferry_msgpack_new(zval *rv, const char *cls, uint32_t argc, zval *args);
/* get_debug_type($v), for error messages. */
zend_string *ferry_msgpack_debug_type(zval *v);

/* ferry_msgpack_ext.c: 1 when the ext value was decoded into rv, 0 when the PHP
 * extension `handler` must decode it. The cache starts zeroed for each decode. */
typedef struct {
	int state; /* 0 not looked up, 1 usable, -1 unusable */
	zend_class_entry *ce;
	uint32_t offset[9];
} fmp_ext_class;
enum { FMP_CLS_TIMESTAMP, FMP_CLS_DECIMAL, FMP_CLS_UUID, FMP_CLS_DATETIME, FMP_CLS_INTERVAL, FMP_CLS_COUNT };
typedef struct {
	fmp_ext_class cls[FMP_CLS_COUNT];
} fmp_ext_cache;
/* The property slots of php/msgpack's value class `which` (FMP_CLS_*), looked up once per
 * cache; NULL when the class is missing or not shaped as expected. */
fmp_ext_class *ferry_msgpack_ext_class(fmp_ext_cache *cache, int which);
int ferry_msgpack_ext_native(fmp_ext_cache *cache, zval *handler, int8_t type, const uint8_t *payload, uint32_t n, zval *rv);

/* ferry_msgpack_extenc.c: 1 when obj was packed into s (ext header and payload) as
 * php/msgpack's own extension for its class in `by_class` (Packer's class => Extension map)
 * would pack it, 0 when the Packer must. */
int ferry_msgpack_ext_pack(fmp_ext_cache *cache, HashTable *by_class, zend_object *obj, smart_str *s);

void ferry_msgpack_minit(int module_number);
void ferry_msgpack_mshutdown(int module_number);

#endif
