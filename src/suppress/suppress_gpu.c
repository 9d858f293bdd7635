/*
 * The noise suppressor on the GPU, the engine's side (suppress_gpu.h): the CPU
 * suppressor computes the shape (its checks, frame, constants, window and
 * noise seed), the CUDA module runs it. The module links no engine code, so
 * the one source of those numbers stays suppress.c and both sides start from
 * the same bits.
 */
#include "suppress_gpu.h"

#include <stdlib.h>

#include "gpu.h"
#include "suppress_bins.h"

struct gf_suppress_gpu {
	void *inst;	   /* the module's */
	uint32_t n;	   /* the frame: the latency */
	uint32_t channels; /* a frame's samples in the interleave process() takes */
	/* One channel's CPU suppressor, never run: the shape's source, and the slot through which a new
	 * hum table (set_hum) reaches the audio thread, which hands it to the module. */
	struct gf_suppress *shape;
};

/* The CPU suppressor for the shape (nothing in it is per channel), which the GPU's then runs; a hum
 * the parameters start with reaches it with the first process() call, as a later one does. */
static int shape_and_run(const struct gf_suppress_params *p, uint32_t channels, uint32_t rate, int device,
			 struct gf_suppress_gpu *s, struct gf_errbuf *eb)
{
	int err = gf_suppress_new(p, 1, rate, &s->shape, eb);
	if (err)
		return err;
	struct gf_suppress_shape sh;
	gf_suppress_shape_of(s->shape, &sh);
	s->n = sh.n;
	return gf_cuda_suppress_new(&sh, channels, device, &s->inst, eb); /* copies what it keeps */
}

int gf_suppress_gpu_new(const struct gf_suppress_params *p, uint32_t channels, uint32_t rate, int device,
			struct gf_suppress_gpu **out, struct gf_errbuf *eb)
{
	*out = NULL;
	if (!channels) {
		gf_errbuf_set(eb, "suppress: 0 channels: need at least one");
		return GF_E_INVAL;
	}
	struct gf_suppress_gpu *s = calloc(1, sizeof(*s));
	if (!s)
		return GF_E_NOMEM;
	s->channels = channels;
	int err = shape_and_run(p, channels, rate, device, s, eb);
	if (err) {
		gf_suppress_free(s->shape);
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

void gf_suppress_gpu_free(struct gf_suppress_gpu *s)
{
	if (!s)
		return;
	gf_cuda_suppress_free(s->inst);
	gf_suppress_free(s->shape);
	free(s);
}

uint32_t gf_suppress_gpu_latency(const struct gf_suppress_gpu *s)
{
	return s->n;
}

void gf_suppress_gpu_set_hum(struct gf_suppress_gpu *s, const struct gf_suppress_hum *h)
{
	gf_suppress_set_hum(s->shape, h);
}

int gf_suppress_gpu_process_rows(struct gf_suppress_gpu *s, float *buf, uint32_t stride, uint32_t frames,
				 uint64_t deadline_ns)
{
	if (stride < s->channels)
		return GF_E_INVAL;
	int changed;
	const float *hum = gf_suppress_hum_take(s->shape, &changed);
	if (changed) /* set_hum published a table: up with the next hop */
		gf_cuda_suppress_hum(s->inst, hum);
	return gf_cuda_suppress_process(s->inst, buf, stride, frames, deadline_ns);
}

int gf_suppress_gpu_process_by(struct gf_suppress_gpu *s, float *buf, uint32_t frames, uint64_t deadline_ns)
{
	return gf_suppress_gpu_process_rows(s, buf, s->channels, frames, deadline_ns);
}

int gf_suppress_gpu_process(struct gf_suppress_gpu *s, float *buf, uint32_t frames)
{
	return gf_suppress_gpu_process_by(s, buf, frames, 0);
}

void gf_suppress_gpu_set_floor(struct gf_suppress_gpu *s, float g)
{
	gf_cuda_suppress_set_floor(s->inst, g);
}

int gf_suppress_gpu_reset(struct gf_suppress_gpu *s)
{
	return gf_cuda_suppress_reset(s->inst);
}

const char *gf_suppress_gpu_error(const struct gf_suppress_gpu *s)
{
	return gf_cuda_suppress_error(s->inst);
}
