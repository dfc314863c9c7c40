/*
 * Goridge v3 frame header codec (docs/protocol.md), free of any PHP API so the fuzz
 * harness can link it alone. Every length comes from the wire: callers pass how many
 * bytes they really have, and nothing here reads past that.
 */
#ifndef FERRY_FRAME_H
#define FERRY_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define FERRY_FRAME_VERSION 1
#define FERRY_FRAME_HEADER_SIZE 12
#define FERRY_FRAME_MAX_OPTIONS 10
#define FERRY_FRAME_MAX_HEADER (FERRY_FRAME_HEADER_SIZE + 4 * FERRY_FRAME_MAX_OPTIONS)
#define FERRY_FRAME_UINT32_MAX 0xFFFFFFFFu

typedef enum {
	FERRY_FRAME_OK = 0,
	/* not an error on a stream: fewer bytes than the header or the whole frame needs */
	FERRY_FRAME_NEED_MORE,
	FERRY_FRAME_E_VERSION,
	FERRY_FRAME_E_OPTIONS,
	FERRY_FRAME_E_CRC,
	FERRY_FRAME_E_TOO_LARGE
} ferry_frame_status;

typedef struct {
	uint8_t flags;
	uint8_t stream_flags;
	uint8_t version;       /* valid once the first byte was seen */
	uint8_t words;         /* header length in 32-bit words, as announced */
	uint32_t option_count;
	uint32_t options[FERRY_FRAME_MAX_OPTIONS];
	uint32_t length;       /* payload length */
	uint32_t stored_crc;
	uint32_t computed_crc;
	uint64_t size;         /* header + options + payload; set once the header is valid */
	uint64_t payload_offset; /* from the frame's first byte */
} ferry_frame;

uint32_t ferry_crc32(const uint8_t *p, size_t n);

/*
 * Reads the frame at buf[0 .. avail). Checks, in the order of internal/frame and
 * php/worker's FrameCodec: version, option count, CRC, max_payload. Options are read only
 * when the whole frame is there (FERRY_FRAME_OK).
 */
ferry_frame_status ferry_frame_read(const uint8_t *buf, size_t avail, uint64_t max_payload, ferry_frame *out);

/*
 * Writes the 12-byte header and the options into out (room for FERRY_FRAME_MAX_HEADER
 * bytes); returns the number of bytes written. option_count must be <= 10.
 */
size_t ferry_frame_write_header(uint8_t *out, uint8_t flags, const uint32_t *options, uint32_t option_count,
	uint32_t length, uint8_t stream_flags);

const char *ferry_frame_reason(ferry_frame_status status);

#endif
