/* What every taps reader promises, checked by the fuzz targets (abort() on a breach). */
#ifndef GPUFIR_FUZZ_TAPS_H
#define GPUFIR_FUZZ_TAPS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "taps_io.h"

/*
 * On success 1..GF_TAPS_MAX finite taps; on failure no taps and a message.
 * Frees the taps.
 */
static inline void fuzz_check_taps(int r, double *h, uint32_t n, const struct gf_errbuf *eb)
{
	if (r == 0) {
		if (n == 0 || n > GF_TAPS_MAX)
			abort();
		for (uint32_t i = 0; i < n; i++)
			if (!isfinite(h[i]))
				abort();
	} else if (h || n || eb->msg[0] == '\0') {
		abort();
	}
	free(h);
}

#endif
