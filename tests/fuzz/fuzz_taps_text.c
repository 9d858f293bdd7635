/* libFuzzer entry point: the text taps parser. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "taps_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	double *h = NULL;
	uint32_t n = 0;
	struct gf_errbuf eb = {{0}};
	int r = gf_taps_parse_text((const char *)data, size, "fuzz.txt", &h, &n, &eb);
	if (r == 0) {
		if (n == 0 || n > GF_TAPS_MAX)
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
