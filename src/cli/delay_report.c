/*
 * --check-config's delay lines: what a listener hears as the filter's
 * latency is its group delay in the band that matters (voice), not its length.
 */
#include <stdlib.h>
#include <string.h>

#include "filter_set.h"
#include "minphase.h"
#include "tools.h"

static int same_taps(const struct gf_filter_set *fs, uint32_t a, uint32_t b)
{
	return memcmp(gf_filter_set_channel(fs, a), gf_filter_set_channel(fs, b), fs->taps * sizeof(float)) ==
	       0;
}

void gf_tool_print_delays(FILE *out, const struct gf_filter_set *fs, double rate)
{
	double *h = malloc(fs->taps * sizeof(double));
	if (!h)
		return;
	for (uint32_t c = 0; c < fs->channels; c++) {
		uint32_t first = c, last = c;
		if (c > 0 && same_taps(fs, 0, c))
			continue; /* printed with channel 0 */
		for (uint32_t k = c + 1; k < fs->channels; k++)
			if (same_taps(fs, c, k))
				last = k;
		const float *src = gf_filter_set_channel(fs, c);
		for (uint32_t i = 0; i < fs->taps; i++)
			h[i] = src[i];
		double lo, hi, mean;
		uint32_t used = gf_group_delay_band(h, fs->taps, rate, GF_DELAY_BAND_LO_HZ,
						    GF_DELAY_BAND_HI_HZ, 64, &lo, &hi, &mean);
		char who[64];
		if (fs->channels == 1)
			snprintf(who, sizeof(who), "channel 0");
		else if (first == 0 && last == fs->channels - 1)
			snprintf(who, sizeof(who), "all channels");
		else if (last != first)
			snprintf(who, sizeof(who), "channel %u (and others alike)", first);
		else
			snprintf(who, sizeof(who), "channel %u", first);
		if (used)
			fprintf(out,
				"  delay:        %s: group delay %.2f ms (mean over %g Hz-%g kHz; %.2f..%.2f "
				"ms)\n",
				who, 1e3 * mean / rate, GF_DELAY_BAND_LO_HZ, GF_DELAY_BAND_HI_HZ / 1e3,
				1e3 * lo / rate, 1e3 * hi / rate);
		else
			fprintf(out, "  delay:        %s: no passband between %g Hz and %g kHz\n", who,
				GF_DELAY_BAND_LO_HZ, GF_DELAY_BAND_HI_HZ / 1e3);
	}
	free(h);
}
