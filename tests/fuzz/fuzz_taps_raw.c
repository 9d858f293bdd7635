/*
 * libFuzzer entry point: raw sample files from memory. The first 3 bytes
 * choose the format, offset and length to take, the rest is the file.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_taps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	enum gf_raw_format fmt = (enum gf_raw_format)(1 + data[0] % 7u); /* FLOAT32LE .. S24LE4LJ */
	struct gf_ir_select sel = {.channel = data[0] >> 7, .offset = data[1] & 15u, .length = data[2]};
	double *h = NULL;
	uint32_t n = 0;
	struct gf_errbuf eb = {{0}};
	int r = gf_taps_parse_raw(data + 3, size - 3, "fuzz.raw", fmt, &sel, &h, &n, &eb);
	if (r == 0 &&
	    (sel.channel || (sel.length && n != sel.length) || (size - 3) % gf_taps_raw_size(fmt) != 0))
		abort();
	fuzz_check_taps(r, h, n, &eb);
	return 0;
}
