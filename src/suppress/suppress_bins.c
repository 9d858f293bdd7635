/*
 * The suppressor's per-bin recursions (suppress.h, suppress_bins.h).
 * Every bin depends only on its own state and the powers of itself and its
 * two neighbours in this frame, so bins may run in any order or at once.
 */
#include <math.h>
#include <string.h>

#include "suppress_bins.h"

void gf_suppress_bins_bind(struct gf_suppress_bins *b, float *mem, uint32_t nb)
{
	b->S = mem;
	b->Smin = mem + nb;
	b->Stmp = mem + 2 * (size_t)nb;
	b->p = mem + 3 * (size_t)nb;
	b->L = mem + 4 * (size_t)nb;
	b->Y2 = mem + 5 * (size_t)nb;
	b->Sold = mem + 6 * (size_t)nb;
	b->nb = nb;
}

void gf_suppress_bins_reset(struct gf_suppress_bins *b, const float *seed)
{
	size_t bytes = sizeof(float) * b->nb;
	memset(b->p, 0, bytes);
	memset(b->Y2, 0, bytes);
	b->frames = 0;
	b->seeded = seed != NULL;
	if (!seed)
		return; /* the first frame sets S, Smin and L */
	for (uint32_t i = 0; i < b->nb; i++) {
		float v = seed[i] > GF_SUPPRESS_POWER_FLOOR ? seed[i] : GF_SUPPRESS_POWER_FLOOR;
		b->S[i] = b->Smin[i] = b->Stmp[i] = b->L[i] = b->Sold[i] = v;
	}
}

static inline float power_at(const float *spec, uint32_t i)
{
	return spec[2 * i] * spec[2 * i] + spec[2 * i + 1] * spec[2 * i + 1];
}

static inline float maxf(float a, float b)
{
	return a > b ? a : b;
}

/* The power smoothed over three bins (1/4, 1/2, 1/4), mirrored at the ends. */
static inline float smoothed_power(const float *spec, uint32_t i, uint32_t nb)
{
	uint32_t lo = i > 0 ? i - 1 : 1, hi = i + 1 < nb ? i + 1 : nb - 2;
	return 0.25f * power_at(spec, lo) + 0.5f * power_at(spec, i) + 0.25f * power_at(spec, hi);
}

/* The noise estimate's factor: free averaging at the start, else minimum-controlled. */
static inline float noise_factor(const struct gf_suppress_bins *b, const struct gf_suppress_consts *k,
				 float p)
{
	if (!b->seeded && b->frames < k->start_frames)
		return (float)b->frames / (float)(b->frames + 1);
	return k->a_d + (1.0f - k->a_d) * p;
}

static inline float ramp(float x, float lo, float hi)
{
	float r = (x - lo) / (hi - lo);
	return r < 0.0f ? 0.0f : r > 1.0f ? 1.0f : r;
}

/* The minimum's window turns over after this frame. */
static inline int window_ends(const struct gf_suppress_bins *b, const struct gf_suppress_consts *k)
{
	return (b->frames + 1) % k->min_window == 0;
}

/* Bin @p i's gain for this frame, floored at k->g_min times @p hum (the hum's factor in its bins, 1
 * elsewhere); the state moves on only where @p hold is 0 (suppress_bins.h). */
static float bin_gain(struct gf_suppress_bins *b, const struct gf_suppress_consts *k, uint32_t i, float P,
		      float Pf, float hum, int hold)
{
	float S0 = b->S[i], Smin0 = b->Smin[i], Stmp = b->Stmp[i], L0 = b->L[i], Sold = b->Sold[i];
	if (b->frames == 0 && !b->seeded)
		S0 = Smin0 = Stmp = L0 = Sold = maxf(Pf, GF_SUPPRESS_POWER_FLOOR);
	float S = k->a_s * S0 + (1.0f - k->a_s) * Pf;
	/* Smin: the minimum of S since the window before last began (Cohen's MCRA); slong, with the
	 * window before that: long enough to span a speaker's pauses */
	float smin = maxf(fminf(Smin0, S), GF_SUPPRESS_POWER_FLOOR);
	Stmp = fminf(Stmp, S);
	float slong = fminf(smin, Sold);
	if (window_ends(b, k)) {
		Sold = smin;
		smin = maxf(Stmp, GF_SUPPRESS_POWER_FLOOR);
		Stmp = S;
	}
	/* Speech where S stands well above its minimum, or this frame well above the noise so far
	 * (that keeps a loud stretch without dips out of the noise estimate), or S far above the
	 * longer minimum (that keeps clean speech out of it: its own quietest bins are no noise). */
	float seen = ramp(S / smin, GF_SUPPRESS_PRESENCE_LO, GF_SUPPRESS_PRESENCE_HI);
	seen = maxf(seen, ramp(S / slong, GF_SUPPRESS_STEADY_LO, GF_SUPPRESS_STEADY_HI) *
				  ramp(P / L0, GF_SUPPRESS_SNR_LO, GF_SUPPRESS_SNR_HI));
	seen = maxf(seen, ramp(S / slong, GF_SUPPRESS_LONG_LO, GF_SUPPRESS_LONG_HI));
	float p = k->a_p * b->p[i] + (1.0f - k->a_p) * seen;
	float a = noise_factor(b, k, p);
	/* L within [0.1 slong, 5 Smin], at least Smin in a hum's bins (suppress_bins.h) */
	float L = a * L0 + (1.0f - a) * P;
	L = fminf(L, GF_SUPPRESS_NOISE_OVER_MIN * smin);
	L = maxf(L, hum < 1.0f ? GF_SUPPRESS_HUM_UNDER_MIN * smin : GF_SUPPRESS_NOISE_UNDER_MIN * slong);
	float xi = k->a_dd * b->Y2[i] / L + (1.0f - k->a_dd) * maxf(P / L - 1.0f, 0.0f);
	xi = maxf(xi, GF_SUPPRESS_XI_MIN);
	float g = maxf(xi / (1.0f + xi), hum * k->g_min); /* 1 * g_min is g_min: no hum, the same bits */
	if (hold)
		return g;
	b->S[i] = S;
	b->Smin[i] = smin;
	b->Stmp[i] = Stmp;
	b->Sold[i] = Sold;
	b->p[i] = p;
	b->L[i] = L;
	b->Y2[i] = g * g * P;
	return g;
}

void gf_suppress_bins_run(struct gf_suppress_bins *b, const struct gf_suppress_consts *k,
			  const float *highpass, const float *hum, float *spec, uint32_t nb, int hold)
{
	/* Powers first: the smoothing reads the neighbours' unscaled bins. */
	float g_prev = 0.0f;
	for (uint32_t i = 0; i < nb; i++) {
		float g = bin_gain(b, k, i, power_at(spec, i), smoothed_power(spec, i, nb),
				   hum ? hum[i] : 1.0f, hold);
		if (highpass) /* after bin_gain: Y2 and the estimate are the suppressor's alone */
			g *= highpass[i];
		if (i > 0) { /* bin i-1's neighbours are read now: scale it */
			spec[2 * (i - 1)] *= g_prev;
			spec[2 * (i - 1) + 1] *= g_prev;
		}
		g_prev = g;
	}
	spec[2 * (nb - 1)] *= g_prev;
	spec[2 * (nb - 1) + 1] *= g_prev;
	/* A held frame is time passing (the minimum's window keeps its pace), unless nothing was
	 * learned yet: the first frame learned still starts the state. */
	if ((!hold || b->frames > 0 || b->seeded) && b->frames < UINT32_MAX)
		b->frames++;
}
