#include <string.h>

#include "ferry_frame.h"

static inline uint32_t read_u32le(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline void write_u32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Bitwise: the CRC covers 6 header bytes only, so a table would buy nothing but state. */
uint32_t ferry_crc32(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++) {
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
		}
	}
	return crc ^ 0xFFFFFFFFu;
}

ferry_frame_status ferry_frame_read(const uint8_t *buf, size_t avail, uint64_t max_payload, ferry_frame *out)
{
	memset(out, 0, sizeof(*out));
	if (avail < FERRY_FRAME_HEADER_SIZE) {
		return FERRY_FRAME_NEED_MORE;
	}
	out->version = buf[0] >> 4;
	out->words = buf[0] & 0x0F;
	if (out->version != FERRY_FRAME_VERSION) {
		return FERRY_FRAME_E_VERSION;
	}
	if (out->words < 3 || out->words - 3 > FERRY_FRAME_MAX_OPTIONS) {
		return FERRY_FRAME_E_OPTIONS;
	}
	out->stored_crc = read_u32le(buf + 6);
	out->computed_crc = ferry_crc32(buf, 6);
	if (out->stored_crc != out->computed_crc) {
		return FERRY_FRAME_E_CRC;
	}
	out->length = read_u32le(buf + 2);
	if ((uint64_t)out->length > max_payload) {
		return FERRY_FRAME_E_TOO_LARGE;
	}
	out->flags = buf[1];
	out->stream_flags = buf[10];
	out->option_count = (uint32_t)out->words - 3;
	out->payload_offset = FERRY_FRAME_HEADER_SIZE + 4 * (uint64_t)out->option_count;
	out->size = out->payload_offset + out->length;
	if ((uint64_t)avail < out->size) {
		return FERRY_FRAME_NEED_MORE;
	}
	for (uint32_t i = 0; i < out->option_count; i++) {
		out->options[i] = read_u32le(buf + FERRY_FRAME_HEADER_SIZE + 4 * i);
	}
	return FERRY_FRAME_OK;
}

size_t ferry_frame_write_header(uint8_t *out, uint8_t flags, const uint32_t *options, uint32_t option_count,
	uint32_t length, uint8_t stream_flags)
{
	out[0] = (uint8_t)((FERRY_FRAME_VERSION << 4) | (3 + option_count));
	out[1] = flags;
	write_u32le(out + 2, length);
	write_u32le(out + 6, ferry_crc32(out, 6));
	out[10] = stream_flags;
	out[11] = 0;
	for (uint32_t i = 0; i < option_count; i++) {
		write_u32le(out + FERRY_FRAME_HEADER_SIZE + 4 * i, options[i]);
	}
	return FERRY_FRAME_HEADER_SIZE + 4 * (size_t)option_count;
}

const char *ferry_frame_reason(ferry_frame_status status)
{
	switch (status) {
		case FERRY_FRAME_E_VERSION: return "version";
		case FERRY_FRAME_E_OPTIONS: return "options";
		case FERRY_FRAME_E_CRC: return "crc";
		case FERRY_FRAME_E_TOO_LARGE: return "too_large";
		case FERRY_FRAME_NEED_MORE: return "truncated";
		default: return "";
	}
}
