#include "filter_set.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

int gf_filter_set_new(struct gf_filter_set **out, uint32_t channels, uint32_t taps)
{
	*out = NULL;
	if (channels == 0 || taps == 0)
		return GF_E_INVAL;
	struct gf_filter_set *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return GF_E_NOMEM;
	fs->channels = channels;
	fs->taps = taps;
	fs->coeffs = calloc((size_t)channels * taps, sizeof(float));
	if (!fs->coeffs) {
		free(fs);
		return GF_E_NOMEM;
	}
	*out = fs;
	return 0;
}

int gf_filter_set_dup(struct gf_filter_set **out, const struct gf_filter_set *src)
{
	int err = gf_filter_set_new(out, src->channels, src->taps);
	if (err)
		return err;
	memcpy((*out)->coeffs, src->coeffs, (size_t)src->channels * src->taps * sizeof(float));
	return 0;
}

int gf_filter_set_check_finite(const struct gf_filter_set *fs)
{
	size_t n = (size_t)fs->channels * fs->taps;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(fs->coeffs[i]))
			return GF_E_NONFINITE;
	return 0;
}

void gf_filter_set_free(struct gf_filter_set *fs)
{
	if (!fs)
		return;
	free(fs->coeffs);
	free(fs);
}
