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

int gf_filter_set_new_mixer(struct gf_filter_set **out, uint32_t inputs, uint32_t outputs, uint32_t paths,
			    uint32_t taps)
{
	*out = NULL;
	if (inputs == 0 || outputs == 0)
		return GF_E_INVAL;
	int err = gf_filter_set_new(out, paths, taps);
	if (err)
		return err;
	struct gf_filter_set *fs = *out;
	fs->inputs = inputs;
	fs->outputs = outputs;
	fs->path_in = calloc(paths, sizeof(uint32_t));
	fs->path_out = calloc(paths, sizeof(uint32_t));
	if (!fs->path_in || !fs->path_out) {
		gf_filter_set_free(fs);
		*out = NULL;
		return GF_E_NOMEM;
	}
	return 0;
}

int gf_filter_set_dup(struct gf_filter_set **out, const struct gf_filter_set *src)
{
	int err = src->path_in
			  ? gf_filter_set_new_mixer(out, src->inputs, src->outputs, src->channels, src->taps)
			  : gf_filter_set_new(out, src->channels, src->taps);
	if (err)
		return err;
	memcpy((*out)->coeffs, src->coeffs, (size_t)src->channels * src->taps * sizeof(float));
	if (src->path_in) {
		memcpy((*out)->path_in, src->path_in, src->channels * sizeof(uint32_t));
		memcpy((*out)->path_out, src->path_out, src->channels * sizeof(uint32_t));
	}
	return 0;
}

int gf_filter_set_paths_plain(struct gf_filter_set **out, const struct gf_filter_set *mixer)
{
	int err = gf_filter_set_new(out, mixer->channels, mixer->taps);
	if (!err)
		memcpy((*out)->coeffs, mixer->coeffs, (size_t)mixer->channels * mixer->taps * sizeof(float));
	return err;
}

int gf_filter_set_check_paths(const struct gf_filter_set *fs)
{
	for (uint32_t p = 0; fs->path_in && p < fs->channels; p++)
		if (fs->path_in[p] >= fs->inputs || fs->path_out[p] >= fs->outputs)
			return GF_E_INVAL;
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
	free(fs->path_in);
	free(fs->path_out);
	free(fs);
}
