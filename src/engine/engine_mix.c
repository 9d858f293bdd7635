/*
 * A mixer on a backend that runs plain sets only (the CUDA backend): the
 * instance convolves the mixer's paths as channels, FIR p over its own copy
 * of input path_in[p], and the engine sums each output's paths here. The
 * CPU backend runs a mixer itself, transforming each input once
 * (cpu_fft.c); on the GPU a path's forward transform is cheap beside its
 * spectral products, so the paths are transformed each (docs/engine.md#mixer).
 *
 * gf_mix_new allocates on the control thread; gather and sum run on the
 * thread that calls the instance, bounded by max_block * paths.
 */
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

struct gf_mix {
	uint32_t inputs, outputs, paths;
	uint32_t max_block; /* frames a call may carry */
	uint32_t hist_cap;  /* frames a prime keeps: taps - 1 */
	uint32_t frames;    /* of the call in flight */
	uint32_t *path_in, *path_out;
	float *x;    /* [max_block][paths]: each path's input */
	float *y;    /* [max_block][paths]: each path's output */
	float *hist; /* [hist_cap][paths]: a prime's history, gathered */
};

void gf_mix_free(struct gf_mix *m)
{
	if (!m)
		return;
	free(m->path_in);
	free(m->path_out);
	free(m->x);
	free(m->y);
	free(m->hist);
	free(m);
}

int gf_mix_new(struct gf_mix **out, const struct gf_filter_set *fs, uint32_t max_block)
{
	struct gf_mix *m = calloc(1, sizeof(*m));
	*out = NULL;
	if (!m)
		return GF_E_NOMEM;
	m->inputs = fs->inputs;
	m->outputs = fs->outputs;
	m->paths = fs->channels;
	m->max_block = max_block;
	m->hist_cap = fs->taps - 1;
	m->path_in = malloc(m->paths * sizeof(uint32_t));
	m->path_out = malloc(m->paths * sizeof(uint32_t));
	m->x = calloc((size_t)max_block * m->paths, sizeof(float));
	m->y = calloc((size_t)max_block * m->paths, sizeof(float));
	m->hist = calloc(((size_t)m->hist_cap + 1) * m->paths, sizeof(float));
	if (!m->path_in || !m->path_out || !m->x || !m->y || !m->hist) {
		gf_mix_free(m);
		return GF_E_NOMEM;
	}
	memcpy(m->path_in, fs->path_in, m->paths * sizeof(uint32_t));
	memcpy(m->path_out, fs->path_out, m->paths * sizeof(uint32_t));
	*out = m;
	return 0;
}

/* dst[f][p] = src[f][path_in[p]] for @p frames interleaved frames. */
static void gather(const struct gf_mix *m, float *dst, const float *src, uint32_t frames)
{
	for (uint32_t f = 0; f < frames; f++, dst += m->paths, src += m->inputs)
		for (uint32_t p = 0; p < m->paths; p++)
			dst[p] = src[m->path_in[p]];
}

int gf_mix_prime(struct gf_mix *m, const struct gf_inst *in, const float *history, uint32_t frames)
{
	if (!in->ops->prime)
		return 0;
	/* The newest taps - 1 frames are all a FIR remembers. */
	uint32_t n = frames < m->hist_cap ? frames : m->hist_cap;
	if (n)
		gather(m, m->hist, history + (size_t)(frames - n) * m->inputs, n);
	return in->ops->prime(in->bi, m->hist, n);
}

int gf_mix_submit(struct gf_mix *m, const struct gf_inst *in, const float *x, uint32_t frames)
{
	if (frames > m->max_block)
		return GF_E_INVAL;
	gather(m, m->x, x, frames);
	int err = in->ops->submit(in->bi, m->x, frames);
	if (!err)
		m->frames = frames;
	return err;
}

int gf_mix_finish(struct gf_mix *m, const struct gf_inst *in, float *y, uint64_t deadline_ns)
{
	int err = in->ops->finish(in->bi, m->y, deadline_ns);
	if (err)
		return err;
	memset(y, 0, (size_t)m->frames * m->outputs * sizeof(float));
	const float *py = m->y;
	for (uint32_t f = 0; f < m->frames; f++, py += m->paths, y += m->outputs)
		for (uint32_t p = 0; p < m->paths; p++)
			y[m->path_out[p]] += py[p];
	return 0;
}
