/*
 * --check-config's delay lines: what a listener hears as the filter's
 * latency is its group delay in the band that matters (voice), not its length.
 * A mixer's per output (response_view.h), bounded whatever its paths.
 */
#include <stdlib.h>
#include <string.h>

#include "filter_set.h"
#include "minphase.h"
#include "response_view.h"
#include "tools.h"

static int same_taps(const struct gf_filter_set *fs, uint32_t a, uint32_t b)
{
	return memcmp(gf_filter_set_channel(fs, a), gf_filter_set_channel(fs, b), fs->taps * sizeof(float)) ==
	       0;
}

/* One line: @p who's group delay in the band, from @p src (@p taps taps; @p h has room for them). */
static void print_line(FILE *out, const char *who, const float *src, uint32_t taps, double rate, double *h)
{
	for (uint32_t i = 0; i < taps; i++)
		h[i] = src[i];
	double lo, hi, mean;
	uint32_t used = gf_group_delay_band(h, taps, rate, GF_DELAY_BAND_LO_HZ, GF_DELAY_BAND_HI_HZ, 64, &lo,
					    &hi, &mean);
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

/* A mixer: each distinct output sum once, named by its first output, up to the analysed ones. */
static void print_view(FILE *out, const struct gf_response_view *v, double rate, double *h)
{
	uint32_t n = v->n_distinct < GF_RESPONSE_VIEW_STATS_MAX ? v->n_distinct : GF_RESPONSE_VIEW_STATS_MAX;
	for (uint32_t d = 0; d < n; d++) {
		uint32_t first = UINT32_MAX, alike = 0;
		for (uint32_t o = 0; o < v->outputs; o++)
			if (v->n_firs[o] && v->of_output[o] == d) {
				first = first == UINT32_MAX ? o : first;
				alike++;
			}
		char who[64];
		snprintf(who, sizeof(who), "output %u%s", first, alike > 1 ? " (and others alike)" : "");
		print_line(out, who, v->sums + (size_t)d * v->taps, v->taps, rate, h);
	}
	if (n < v->n_distinct)
		fprintf(out, "  delay:        (%u more distinct output sums not analysed)\n",
			v->n_distinct - n);
}

void gf_tool_print_delays(FILE *out, const struct gf_filter_set *fs, const struct gf_response_view *view,
			  double rate)
{
	double *h = malloc(fs->taps * sizeof(double));
	if (!h)
		return;
	if (view) {
		print_view(out, view, rate, h);
		free(h);
		return;
	}
	for (uint32_t c = 0; c < fs->channels; c++) {
		uint32_t first = c, last = c;
		if (c > 0 && same_taps(fs, 0, c))
			continue; /* printed with channel 0 */
		for (uint32_t k = c + 1; k < fs->channels; k++)
			if (same_taps(fs, c, k))
				last = k;
		char who[64];
		if (fs->channels == 1)
			snprintf(who, sizeof(who), "channel 0");
		else if (first == 0 && last == fs->channels - 1)
			snprintf(who, sizeof(who), "all channels");
		else if (last != first)
			snprintf(who, sizeof(who), "channel %u (and others alike)", first);
		else
			snprintf(who, sizeof(who), "channel %u", first);
		print_line(out, who, gf_filter_set_channel(fs, c), fs->taps, rate, h);
	}
	free(h);
}
