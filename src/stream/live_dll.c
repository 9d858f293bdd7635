/* The rate-matching loop (live_dll.h has the equations and why they are
 * stable at any period). */
#include <math.h>

#include "live_dll.h"

#define LP_WIDER 8.0	    /* K: the error's low-pass is this many times wider than the loop */
#define CLIP_DEVS 4.0	    /* an innovation beyond this many mean deviations is clipped ... */
#define CLIP_FLOOR_S 0.5e-3 /* ... but never below half a millisecond of frames */

void gf_dll_init(struct gf_dll *d)
{
	d->ratio = 1.0;
	d->err = d->dev = d->age_s = 0.0;
	d->primed = 0;
}

void gf_dll_rejoin(struct gf_dll *d)
{
	d->primed = 0;
}

double gf_dll_bandwidth(const struct gf_dll *d)
{
	return GF_DLL_BW_MIN + (GF_DLL_BW_MAX - GF_DLL_BW_MIN) * exp(-d->age_s / GF_DLL_NARROW_S);
}

static double clamp(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* Low-pass the error with weight @p b per update. A callback that comes
 * late (a scheduling hiccup, not a change of delay) reads as a one-off
 * error: the innovation is clipped to a few times its mean size, which a
 * real change of delay outgrows in a few updates (the mean follows). */
static void filter_error(struct gf_dll *d, double e, double b, double fs)
{
	if (!d->primed) {
		d->err = e;
		d->primed = 1;
		return;
	}
	double lim = CLIP_DEVS * d->dev + CLIP_FLOOR_S * fs;
	double in = clamp(e - d->err, -lim, lim);
	d->err += b * in;
	d->dev += b * (fabs(in) - d->dev);
}

double gf_dll_update(struct gf_dll *d, double e, uint32_t n, double fs)
{
	double t = n / fs, w = 2 * M_PI * gf_dll_bandwidth(d);
	double a = 1.0 - exp(-w * t), b = 1.0 - exp(-LP_WIDER * w * t);
	d->age_s += t;
	filter_error(d, e, b, fs);
	/* The proportional term on the integrator as it was: integrating first
	 * would move the poles off exp(-w T) (unstable from w T = 1.77 on,
	 * 6760 frames at 2 Hz). */
	double c = d->ratio + 2 * a * d->err / n;
	d->ratio = clamp(d->ratio + a * a * d->err / n, 1.0 - GF_DLL_MAX_DEV, 1.0 + GF_DLL_MAX_DEV);
	return clamp(c, 1.0 - GF_DLL_MAX_DEV, 1.0 + GF_DLL_MAX_DEV);
}
