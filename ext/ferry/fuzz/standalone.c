/*
 * Fallback driver when libFuzzer is not available (gcc only): mutates the seed files
 * at random for a fixed time and feeds LLVMFuzzerTestOneInput(), under ASan + UBSan.
 * Usage: frame_fuzz_standalone SECONDS SEED_FILE...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT 8192

static uint64_t state = 0x243F6A8885A308D3ull;

static uint64_t next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

int main(int argc, char **argv)
{
	static uint8_t seeds[64][MAX_INPUT];
	static size_t seed_len[64];
	int nseeds = 0;
	double seconds = argc > 1 ? atof(argv[1]) : 5;

	for (int i = 2; i < argc && nseeds < 64; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			continue;
		}
		seed_len[nseeds] = fread(seeds[nseeds], 1, MAX_INPUT, f);
		fclose(f);
		nseeds++;
	}
	if (nseeds == 0) {
		seed_len[0] = 0;
		nseeds = 1;
	}
	state ^= (uint64_t) time(NULL);
	clock_t end = clock() + (clock_t) (seconds * CLOCKS_PER_SEC);
	unsigned long runs = 0;
	uint8_t buf[MAX_INPUT];
	while (clock() < end) {
		int s = (int) (next() % (uint64_t) nseeds);
		size_t len = seed_len[s];
		memcpy(buf, seeds[s], len);
		for (int k = (int) (next() % 8); k >= 0; k--) {
			switch (next() % 4) {
			case 0: if (len) buf[next() % len] = (uint8_t) next(); break;
			case 1: if (len) len = next() % (len + 1); break;
			case 2: if (len < MAX_INPUT) buf[len++] = (uint8_t) next(); break;
			case 3: if (len && len * 2 <= MAX_INPUT) { memcpy(buf + len, buf, len); len *= 2; } break;
			}
		}
		uint8_t *input = malloc(len ? len : 1);
		memcpy(input, buf, len);
		LLVMFuzzerTestOneInput(input, len);
		free(input);
		runs++;
	}
	printf("standalone fuzz: %lu runs, no faults\n", runs);
	return 0;
}
