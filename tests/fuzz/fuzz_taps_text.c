/* libFuzzer entry point: the text taps parser. */
#include <stdint.h>

#include "fuzz_taps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	double *h = NULL;
	uint32_t n = 0;
	struct gf_errbuf eb = {{0}};
	int r = gf_taps_parse_text((const char *)data, size, "fuzz.txt", &h, &n, &eb);
	fuzz_check_taps(r, h, n, &eb);
	return 0;
}
