/*
 * The hum's deeper floor inside the suppressor's frames, and the slot that
 * carries a table to the audio thread (suppress_hum.h).
 */
#include "suppress_hum.h"

#include <math.h>
#include <string.h>

#define GF_SUPPRESS_GAIN_FRESH 4u

/* Lower @p mask around bin position @p u (fractional) to M's shape. */
static void notch_at(float *mask, uint32_t nb, double u, double depth, double core, double taper)
{
	int lo = (int)floor(u - core - taper), hi = (int)ceil(u + core + taper);
	for (int b = lo < 0 ? 0 : lo; b <= hi && b < (int)nb; b++) {
		double d = fabs(b - u);
		double g = d <= core	       ? depth
			   : d >= core + taper ? 1.0
					       : depth + (1.0 - depth) * (d - core) / taper;
		if (g < mask[b])
			mask[b] = (float)g;
	}
}

int gf_suppress_hum_mask(float *mask, uint32_t nb, uint32_t n, uint32_t rate, const struct gf_suppress_hum *h,
			 uint32_t top)
{
	double df = (double)rate / n, depth = pow(10.0, -GF_SUPPRESS_HUM_DEPTH_DB / 20.0);
	double core = GF_SUPPRESS_HUM_CORE_BINS, taper = GF_SUPPRESS_HUM_TAPER_BINS;
	int flat = 1;
	for (uint32_t b = 0; b < nb; b++)
		mask[b] = 1.0f;
	for (uint32_t k = 0; h && h->f0_hz > 0.0 && k < h->n && h->harmonic[k] <= top; k++) {
		double f = h->f0_hz * h->harmonic[k];
		if (f <= 0.0 || f >= 0.5 * rate)
			continue;
		notch_at(mask, nb, f / df, depth, core, taper);
		flat = 0;
	}
	return flat;
}

void gf_suppress_gain_slot_init(struct gf_suppress_gain_slot *s, float *mem, uint32_t nb, const float *init)
{
	s->nb = nb;
	for (unsigned i = 0; i < 3; i++) {
		s->t[i] = mem + (size_t)i * nb;
		for (uint32_t b = 0; b < nb; b++)
			s->t[i][b] = init ? init[b] : 1.0f;
		s->ones[i] = init == NULL;
	}
	s->front = 0;
	atomic_store(&s->mid, 1u);
	s->back = 2;
}

float *gf_suppress_gain_slot_back(struct gf_suppress_gain_slot *s)
{
	return s->t[s->back];
}

void gf_suppress_gain_slot_publish(struct gf_suppress_gain_slot *s, int ones)
{
	s->ones[s->back] = (uint8_t)(ones != 0);
	/* release: the table's floats before the index; the old middle is the next back */
	unsigned old =
		atomic_exchange_explicit(&s->mid, s->back | GF_SUPPRESS_GAIN_FRESH, memory_order_acq_rel);
	s->back = old & 3u;
}

const float *gf_suppress_gain_slot_take(struct gf_suppress_gain_slot *s, int *changed)
{
	int fresh = (atomic_load_explicit(&s->mid, memory_order_relaxed) & GF_SUPPRESS_GAIN_FRESH) != 0;
	if (fresh) /* acquire: the writer's floats of that table are visible */
		s->front = atomic_exchange_explicit(&s->mid, s->front, memory_order_acq_rel) & 3u;
	if (changed)
		*changed = fresh;
	return s->ones[s->front] ? NULL : s->t[s->front];
}
