/* The worker's input, averaged to mono, handed to the control thread for
 * analysis through a lock-free ring (input_tap.h). */
#include "input_tap.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "ring.h"

struct gf_input_tap {
	struct gf_ring *ring;
	_Atomic uint64_t dropped, taken; /* written by the worker, relaxed */
};

int gf_input_tap_new(struct gf_input_tap **out, uint32_t min_frames, struct gf_errbuf *eb)
{
	*out = NULL;
	struct gf_input_tap *t = calloc(1, sizeof(*t));
	if (!t)
		return GF_E_NOMEM;
	int r = gf_ring_new(&t->ring, min_frames, 1);
	if (r) {
		gf_errbuf_set(eb, "the analysis tap's ring of %u frames: %s", min_frames, gf_strerror(r));
		free(t);
		return r;
	}
	atomic_init(&t->dropped, 0);
	atomic_init(&t->taken, 0);
	*out = t;
	return 0;
}

void gf_input_tap_free(struct gf_input_tap *t)
{
	if (!t)
		return;
	gf_ring_free(t->ring);
	free(t);
}

/* Frames [from, from + n) of @p x averaged into @p dst. */
static void mix(float *dst, const float *x, uint32_t from, uint32_t n, uint32_t ch)
{
	const float g = 1.0f / (float)ch;
	for (uint32_t i = 0; i < n; i++) {
		const float *f = x + (size_t)(from + i) * ch;
		float s = 0.0f;
		for (uint32_t c = 0; c < ch; c++)
			s += f[c];
		dst[i] = s * g;
	}
}

void gf_input_tap_push(struct gf_input_tap *t, const float *x, uint32_t frames, uint32_t channels)
{
	struct gf_ring_vec v[2];
	if (gf_ring_write_vector(t->ring, v) < frames) { /* whole blocks or none: a gap is one gap */
		atomic_fetch_add_explicit(&t->dropped, frames, memory_order_relaxed);
		return;
	}
	uint32_t a = v[0].frames < frames ? v[0].frames : frames;
	mix(v[0].data, x, 0, a, channels);
	if (a < frames)
		mix(v[1].data, x, a, frames - a, channels);
	gf_ring_write_advance(t->ring, frames);
	atomic_fetch_add_explicit(&t->taken, frames, memory_order_relaxed);
}

uint32_t gf_input_tap_read(struct gf_input_tap *t, float *dst, uint32_t max)
{
	return gf_ring_read(t->ring, dst, max);
}

uint64_t gf_input_tap_dropped(const struct gf_input_tap *t)
{
	return atomic_load_explicit(&t->dropped, memory_order_relaxed);
}

uint64_t gf_input_tap_taken(const struct gf_input_tap *t)
{
	return atomic_load_explicit(&t->taken, memory_order_relaxed);
}

uint32_t gf_input_tap_capacity(const struct gf_input_tap *t)
{
	return gf_ring_capacity(t->ring);
}
