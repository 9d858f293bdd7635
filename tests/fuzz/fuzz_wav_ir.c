/*
 * libFuzzer entry point: impulse responses through libsndfile from memory.
 * The first 4 bytes choose the channel, offset and length to take, the rest
 * is the file image.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_taps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	struct gf_ir_select sel = {.channel = data[0] & 3u, .offset = data[1] & 15u, .length = data[2]};
	uint32_t rate = data[3] & 1u ? 48000 : 0;
	double *h = NULL;
	uint32_t n = 0, file_rate = 0;
	struct gf_errbuf eb = {{0}};
	int r = gf_taps_read_wav_mem(data + 4, size - 4, "fuzz.wav", rate, &sel, &h, &n, &file_rate, &eb);
	if (r == 0 && ((sel.length && n != sel.length) || (rate && file_rate != rate)))
		abort();
	fuzz_check_taps(r, h, n, &eb);
	return 0;
}
