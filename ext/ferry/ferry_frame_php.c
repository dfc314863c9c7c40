/*
 * PHP face of ferry_frame.c: the relay's hot path (slice every complete frame out of a
 * read buffer, encode an answer) with the same results and the same fault reasons as
 * php/worker's FrameCodec and FrameParser.
 * One file, past 400 lines: the parse, the encode and the class binding share the
 * frame_class cache and the fault reasons, and read best side by side with FrameCodec.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "zend_exceptions.h"
#include "zend_smart_str.h"
#include "ext/spl/spl_exceptions.h"
#include "ext/standard/php_var.h"
#include "php_ferry.h"
#include "ferry_frame.h"

#define FERRY_DEFAULT_MAX_PAYLOAD (64 * 1024 * 1024)

static zend_class_entry *ferry_frame_exception_ce;

void ferry_frame_minit(int module_number)
{
	zend_class_entry ce;
	INIT_NS_CLASS_ENTRY(ce, "Ferry\\Ext", "FrameException", NULL);
	ferry_frame_exception_ce = zend_register_internal_class_ex(&ce, spl_ce_RuntimeException);
	ferry_frame_exception_ce->ce_flags |= ZEND_ACC_FINAL;

	zval empty;
	ZVAL_EMPTY_STRING(&empty);
	zend_string *name = zend_string_init_interned("reason", sizeof("reason") - 1, 1);
	zend_declare_typed_property(ferry_frame_exception_ce, name, &empty, ZEND_ACC_PUBLIC, NULL,
		(zend_type) ZEND_TYPE_INIT_CODE(IS_STRING, 0, 0));
	zend_string_release(name);

	REGISTER_NS_LONG_CONSTANT("Ferry\\Ext", "DEFAULT_MAX_PAYLOAD", FERRY_DEFAULT_MAX_PAYLOAD, CONST_CS | CONST_PERSISTENT);
}

static void throw_frame_exception(const char *reason, zend_string *message)
{
	zend_object *ex = zend_throw_exception(ferry_frame_exception_ce, ZSTR_VAL(message), 0);
	zend_update_property_string(ferry_frame_exception_ce, ex, "reason", sizeof("reason") - 1, reason);
	zend_string_release(message);
}

/* Same wording as FrameCodec::readHeader(), offsets relative to the buffer. */
static void throw_header_error(ferry_frame_status status, const ferry_frame *f, size_t offset, zend_long max_payload)
{
	zend_string *msg;
	switch (status) {
		case FERRY_FRAME_E_VERSION:
			msg = zend_strpprintf(0, "unsupported frame version %d at offset %zu (expected 1)", f->version, offset);
			break;
		case FERRY_FRAME_E_OPTIONS:
			msg = zend_strpprintf(0, "invalid header length of %d words at offset %zu (3 + at most 10 options)", f->words, offset);
			break;
		case FERRY_FRAME_E_CRC:
			msg = zend_strpprintf(0, "header CRC mismatch at offset %zu: stored %08x, computed %08x",
				offset, (unsigned) f->stored_crc, (unsigned) f->computed_crc);
			break;
		case FERRY_FRAME_E_TOO_LARGE:
			msg = zend_strpprintf(0, "payload of %u bytes at offset %zu exceeds the limit of " ZEND_LONG_FMT " bytes",
				(unsigned) f->length, offset, max_payload);
			break;
		default:
			msg = zend_string_init("invalid frame", sizeof("invalid frame") - 1, 0);
			break;
	}
	throw_frame_exception(ferry_frame_reason(status), msg);
}

static void frame_options(zval *options, const ferry_frame *f)
{
	if (f->option_count == 0) {
		ZVAL_EMPTY_ARRAY(options);
		return;
	}
	array_init_size(options, f->option_count);
	zend_hash_real_init_packed(Z_ARRVAL_P(options));
	ZEND_HASH_FILL_PACKED(Z_ARRVAL_P(options)) {
		for (uint32_t i = 0; i < f->option_count; i++) {
			ZEND_HASH_FILL_SET_LONG((zend_long) f->options[i]);
			ZEND_HASH_FILL_NEXT();
		}
	} ZEND_HASH_FILL_END();
}

static void frame_payload(zval *payload, const ferry_frame *f, const uint8_t *frame_start)
{
	if (f->length == 0) {
		ZVAL_EMPTY_STRING(payload);
	} else {
		ZVAL_STRINGL(payload, (const char *) frame_start + f->payload_offset, f->length);
	}
}

/* [flags, options, payload, streamFlags]: Ferry\Worker\Frame's constructor order. */
static void frame_to_array(zval *out, const ferry_frame *f, const uint8_t *frame_start)
{
	zval options, payload;

	array_init_size(out, 4);
	add_next_index_long(out, f->flags);
	frame_options(&options, f);
	add_next_index_zval(out, &options);
	frame_payload(&payload, f, frame_start);
	add_next_index_zval(out, &payload);
	add_next_index_long(out, f->stream_flags);
}

static bool check_max_payload(zend_long max_payload, uint32_t arg)
{
	if (max_payload < 0 || (zend_ulong) max_payload > FERRY_FRAME_UINT32_MAX) {
		zend_argument_value_error(arg, "must be within 0..4294967295, got " ZEND_LONG_FMT, max_payload);
		return false;
	}
	return true;
}

typedef struct {
	zend_class_entry *ce;
	uint32_t flags, options, payload, stream_flags; /* property offsets */
} frame_class;

static void frame_to_object(zval *out, const frame_class *fc, const ferry_frame *f, const uint8_t *frame_start)
{
	object_init_ex(out, fc->ce);
	zend_object *obj = Z_OBJ_P(out);
	/* The slots are uninitialised typed properties: set once here, as the constructor would. */
	ZVAL_LONG(OBJ_PROP(obj, fc->flags), f->flags);
	frame_options(OBJ_PROP(obj, fc->options), f);
	frame_payload(OBJ_PROP(obj, fc->payload), f, frame_start);
	ZVAL_LONG(OBJ_PROP(obj, fc->stream_flags), f->stream_flags);
}

/* frames_parse() and frames_read(): fc NULL for arrays. */
static void parse_frames(INTERNAL_FUNCTION_PARAMETERS, const frame_class *fc)
{
	zend_string *buffer;
	zend_long offset = 0;
	zend_long max_payload = FERRY_DEFAULT_MAX_PAYLOAD;

	ZEND_PARSE_PARAMETERS_START(1, 3)
		Z_PARAM_STR(buffer)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(offset)
		Z_PARAM_LONG(max_payload)
	ZEND_PARSE_PARAMETERS_END();

	if (offset < 0 || (zend_ulong) offset > ZSTR_LEN(buffer)) {
		zend_argument_value_error(2, "must be within 0..%zu (the buffer length), got " ZEND_LONG_FMT, ZSTR_LEN(buffer), offset);
		RETURN_THROWS();
	}
	if (!check_max_payload(max_payload, 3)) {
		RETURN_THROWS();
	}

	const uint8_t *buf = (const uint8_t *) ZSTR_VAL(buffer);
	size_t len = ZSTR_LEN(buffer);
	size_t pos = (size_t) offset;
	zval frames;
	ferry_frame f;

	array_init(&frames);
	for (;;) {
		ferry_frame_status status = ferry_frame_read(buf + pos, len - pos, (uint64_t) max_payload, &f);
		if (status == FERRY_FRAME_NEED_MORE) {
			break;
		}
		if (status != FERRY_FRAME_OK) {
			/* The stream cannot be resynchronised: FrameParser throws too, frames before it included. */
			zval_ptr_dtor(&frames);
			throw_header_error(status, &f, pos, max_payload);
			RETURN_THROWS();
		}
		zval frame;
		if (fc) {
			frame_to_object(&frame, fc, &f, buf + pos);
		} else {
			frame_to_array(&frame, &f, buf + pos);
		}
		add_next_index_zval(&frames, &frame);
		pos += (size_t) f.size; /* f.size <= len - pos, checked by ferry_frame_read() */
	}
	array_init_size(return_value, 2);
	add_next_index_zval(return_value, &frames);
	add_next_index_long(return_value, (zend_long) pos);
}

ZEND_FUNCTION(ferry_frames_parse)
{
	parse_frames(INTERNAL_FUNCTION_PARAM_PASSTHRU, NULL);
}

ZEND_FUNCTION(ferry_frame_decode)
{
	zend_string *bytes;
	zend_long max_payload = FERRY_DEFAULT_MAX_PAYLOAD;
	ferry_frame f;

	ZEND_PARSE_PARAMETERS_START(1, 2)
		Z_PARAM_STR(bytes)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(max_payload)
	ZEND_PARSE_PARAMETERS_END();

	if (!check_max_payload(max_payload, 2)) {
		RETURN_THROWS();
	}
	size_t len = ZSTR_LEN(bytes);
	ferry_frame_status status = ferry_frame_read((const uint8_t *) ZSTR_VAL(bytes), len, (uint64_t) max_payload, &f);
	if (status == FERRY_FRAME_NEED_MORE) {
		if (len < FERRY_FRAME_HEADER_SIZE) {
			throw_frame_exception("truncated", zend_strpprintf(0, "frame truncated: %zu bytes, the header alone needs 12", len));
		} else {
			throw_frame_exception("truncated", zend_strpprintf(0, "frame truncated: header announces " ZEND_LONG_FMT " bytes, got %zu",
				(zend_long) f.size, len));
		}
		RETURN_THROWS();
	}
	if (status != FERRY_FRAME_OK) {
		throw_header_error(status, &f, 0, max_payload);
		RETURN_THROWS();
	}
	if ((uint64_t) len > f.size) {
		throw_frame_exception("invalid", zend_strpprintf(0, "trailing data: frame is " ZEND_LONG_FMT " bytes, buffer has %zu",
			(zend_long) f.size, len));
		RETURN_THROWS();
	}
	frame_to_array(return_value, &f, (const uint8_t *) ZSTR_VAL(bytes));
}

static zend_string *frame_string(uint8_t flags, const uint32_t *options, uint32_t count, const char *payload,
	size_t length, uint8_t stream_flags)
{
	uint8_t head[FERRY_FRAME_MAX_HEADER];
	size_t head_len = ferry_frame_write_header(head, flags, options, count, (uint32_t) length, stream_flags);
	zend_string *out = zend_string_alloc(head_len + length, 0);
	memcpy(ZSTR_VAL(out), head, head_len);
	if (length) {
		memcpy(ZSTR_VAL(out) + head_len, payload, length);
	}
	ZSTR_VAL(out)[head_len + length] = '\0';
	return out;
}

ZEND_FUNCTION(ferry_frame_encode)
{
	zend_long flags;
	HashTable *options_ht = NULL;
	zend_string *payload = NULL;
	zend_long stream_flags = 0;
	uint32_t options[FERRY_FRAME_MAX_OPTIONS];
	uint32_t count = 0;

	ZEND_PARSE_PARAMETERS_START(1, 4)
		Z_PARAM_LONG(flags)
		Z_PARAM_OPTIONAL
		Z_PARAM_ARRAY_HT(options_ht)
		Z_PARAM_STR(payload)
		Z_PARAM_LONG(stream_flags)
	ZEND_PARSE_PARAMETERS_END();

	/* Checked in FrameCodec::encode()'s order so the same bad input names the same fault. */
	if (flags < 0 || flags > 0xFF) {
		throw_frame_exception("invalid", zend_strpprintf(0, "frame flags must fit in one byte, got " ZEND_LONG_FMT, flags));
		RETURN_THROWS();
	}
	if (stream_flags < 0 || stream_flags > 0xFF) {
		throw_frame_exception("invalid", zend_strpprintf(0, "stream flags must fit in one byte, got " ZEND_LONG_FMT, stream_flags));
		RETURN_THROWS();
	}
	if (options_ht) {
		uint32_t n = zend_hash_num_elements(options_ht);
		if (n > FERRY_FRAME_MAX_OPTIONS) {
			throw_frame_exception("options", zend_strpprintf(0, "a frame carries at most 10 options, got %u", n));
			RETURN_THROWS();
		}
	}
	size_t length = payload ? ZSTR_LEN(payload) : 0;
	if ((uint64_t) length > FERRY_FRAME_UINT32_MAX) {
		throw_frame_exception("too_large", zend_strpprintf(0, "payload of %zu bytes does not fit a uint32 length", length));
		RETURN_THROWS();
	}
	if (options_ht) {
		zend_ulong index;
		zend_string *key;
		zval *option;
		ZEND_HASH_FOREACH_KEY_VAL(options_ht, index, key, option) {
			ZVAL_DEREF(option);
			if (Z_TYPE_P(option) != IS_LONG || Z_LVAL_P(option) < 0 || (zend_ulong) Z_LVAL_P(option) > FERRY_FRAME_UINT32_MAX) {
				smart_str exported = {0};
				php_var_export_ex(option, 1, &exported);
				smart_str_0(&exported);
				zend_string *msg = key
					? zend_strpprintf(0, "option #%s must be a uint32, got %s", ZSTR_VAL(key), ZSTR_VAL(exported.s))
					: zend_strpprintf(0, "option #" ZEND_ULONG_FMT " must be a uint32, got %s", index, ZSTR_VAL(exported.s));
				smart_str_free(&exported);
				throw_frame_exception("options", msg);
				RETURN_THROWS();
			}
			options[count++] = (uint32_t) Z_LVAL_P(option);
		} ZEND_HASH_FOREACH_END();
	}
	RETURN_NEW_STR(frame_string((uint8_t) flags, options, count, payload ? ZSTR_VAL(payload) : NULL, length,
		(uint8_t) stream_flags));
}

ZEND_FUNCTION(ferry_answer_frame)
{
	zend_long context_length;
	zend_long id;
	zend_string *payload;

	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_LONG(context_length)
		Z_PARAM_LONG(id)
		Z_PARAM_STR(payload)
	ZEND_PARSE_PARAMETERS_END();

	if (context_length < 0 || (zend_ulong) context_length > ZSTR_LEN(payload)) {
		zend_argument_value_error(1, "must be within 0..%zu (the payload length), got " ZEND_LONG_FMT, ZSTR_LEN(payload), context_length);
		RETURN_THROWS();
	}
	if (id < 0 || (zend_ulong) id > FERRY_FRAME_UINT32_MAX) {
		zend_argument_value_error(2, "must be within 0..4294967295, got " ZEND_LONG_FMT, id);
		RETURN_THROWS();
	}
	if ((uint64_t) ZSTR_LEN(payload) > FERRY_FRAME_UINT32_MAX) {
		throw_frame_exception("too_large", zend_strpprintf(0, "payload of %zu bytes does not fit a uint32 length", ZSTR_LEN(payload)));
		RETURN_THROWS();
	}
	uint32_t options[2] = {(uint32_t) context_length, (uint32_t) id};
	RETURN_NEW_STR(frame_string(0x04 /* CODEC_RAW */, options, 2, ZSTR_VAL(payload), ZSTR_LEN(payload), 0));
}

/* answer_frame() for context . body given apart: the worker's answer without a PHP concatenation. */
ZEND_FUNCTION(ferry_job_answer)
{
	zend_long id;
	zend_string *context;
	zend_string *body;

	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_LONG(id)
		Z_PARAM_STR(context)
		Z_PARAM_STR(body)
	ZEND_PARSE_PARAMETERS_END();

	if (id < 0 || (zend_ulong) id > FERRY_FRAME_UINT32_MAX) {
		zend_argument_value_error(1, "must be within 0..4294967295, got " ZEND_LONG_FMT, id);
		RETURN_THROWS();
	}
	size_t clen = ZSTR_LEN(context);
	size_t blen = ZSTR_LEN(body);
	if ((uint64_t) clen > FERRY_FRAME_UINT32_MAX || (uint64_t) blen > FERRY_FRAME_UINT32_MAX - (uint64_t) clen) {
		throw_frame_exception("too_large", zend_strpprintf(0, "payload of %zu bytes does not fit a uint32 length",
			clen + blen));
		RETURN_THROWS();
	}
	uint32_t options[2] = {(uint32_t) clen, (uint32_t) id};
	uint8_t head[FERRY_FRAME_MAX_HEADER];
	size_t head_len = ferry_frame_write_header(head, 0x04 /* CODEC_RAW */, options, 2, (uint32_t) (clen + blen), 0);
	zend_string *out = zend_string_alloc(head_len + clen + blen, 0);
	memcpy(ZSTR_VAL(out), head, head_len);
	memcpy(ZSTR_VAL(out) + head_len, ZSTR_VAL(context), clen);
	memcpy(ZSTR_VAL(out) + head_len + clen, ZSTR_VAL(body), blen);
	ZSTR_VAL(out)[head_len + clen + blen] = '\0';
	RETURN_NEW_STR(out);
}

/*
 * frames_parse() with Ferry\Worker\Frame objects instead of arrays: the SDK's reader
 * builds one per frame, and a PHP constructor call cost more than the parsing. The
 * properties are found by name and type, so a Frame that changed shape is an Error,
 * never a misplaced value.
 */
static bool frame_property(zend_class_entry *ce, const char *name, size_t len, uint32_t type, uint32_t *offset)
{
	zend_property_info *info = zend_hash_str_find_ptr(&ce->properties_info, name, len);
	if (!info || !(info->flags & ZEND_ACC_PUBLIC) || (info->flags & ZEND_ACC_STATIC) || ZEND_TYPE_PURE_MASK(info->type) != type
		|| ZEND_TYPE_IS_COMPLEX(info->type)) {
		return false;
	}
	*offset = info->offset;
	return true;
}

static bool find_frame_class(frame_class *fc)
{
	if (FERRY_G(frame_ce)) {
		/* A class, once declared, stays as it is until the request ends. */
		fc->ce = FERRY_G(frame_ce);
		fc->flags = FERRY_G(frame_offsets)[0];
		fc->options = FERRY_G(frame_offsets)[1];
		fc->payload = FERRY_G(frame_offsets)[2];
		fc->stream_flags = FERRY_G(frame_offsets)[3];
		return true;
	}
	zend_string *name = zend_string_init("Ferry\\Worker\\Frame", sizeof("Ferry\\Worker\\Frame") - 1, 0);
	fc->ce = zend_lookup_class(name);
	zend_string_release(name);
	if (!fc->ce) {
		if (!EG(exception)) {
			zend_throw_error(NULL, "Ferry\\Ext\\frames_read(): class Ferry\\Worker\\Frame not found");
		}
		return false;
	}
	if ((fc->ce->ce_flags & (ZEND_ACC_INTERFACE | ZEND_ACC_TRAIT | ZEND_ACC_EXPLICIT_ABSTRACT_CLASS | ZEND_ACC_ENUM))
		|| fc->ce->default_properties_count != 4
		|| !frame_property(fc->ce, "flags", 5, MAY_BE_LONG, &fc->flags)
		|| !frame_property(fc->ce, "options", 7, MAY_BE_ARRAY, &fc->options)
		|| !frame_property(fc->ce, "payload", 7, MAY_BE_STRING, &fc->payload)
		|| !frame_property(fc->ce, "streamFlags", 11, MAY_BE_LONG, &fc->stream_flags)) {
		zend_throw_error(NULL, "Ferry\\Ext\\frames_read(): Ferry\\Worker\\Frame is not the class this extension "
			"was built for (int $flags, array $options, string $payload, int $streamFlags)");
		return false;
	}
	FERRY_G(frame_ce) = fc->ce;
	FERRY_G(frame_offsets)[0] = fc->flags;
	FERRY_G(frame_offsets)[1] = fc->options;
	FERRY_G(frame_offsets)[2] = fc->payload;
	FERRY_G(frame_offsets)[3] = fc->stream_flags;
	return true;
}

ZEND_FUNCTION(ferry_frames_read)
{
	frame_class fc;
	if (!find_frame_class(&fc)) {
		RETURN_THROWS();
	}
	parse_frames(INTERNAL_FUNCTION_PARAM_PASSTHRU, &fc);
}
