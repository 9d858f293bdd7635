/*
 * libFuzzer entry point: impulse responses through libsndfile from memory.
 * The first 4 bytes choose the channel, offset and length to take, the rest
 * is the file image.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "taps_io.h"

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
	if (r == 0) {
		if (n == 0 || (sel.length && n != sel.length) || (rate && file_rate != rate))
			abort();
		for (uint32_t i = 0; i < n; i++)
			if (!isfinite(h[i]))
				abort();
	} else if (h || n || eb.msg[0] == '\0') {
		abort();
	}
	free(h);
	return 0;
}
