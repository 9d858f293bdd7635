/**
 * @file response_view.h
 * A mixer's filters as --check-config, --plot and the daemon's /response.svg show them,
 * bounded whatever the number of paths: per output channel, the sum of the FIRs of the
 * paths that feed it (its response when every input carries the same signal), identical
 * sums found by hash and kept once. Building a view is one pass over the taps (a
 * 1024 x 1024 mixer of 255-tap paths: about 0.3 s); at most GF_RESPONSE_VIEW_STATS_MAX
 * distinct sums are analysed and GF_RESPONSE_VIEW_PLOT_MAX drawn.
 *
 * Control or build thread; allocates (never on the audio path).
 */
#ifndef GPUFIR_RESPONSE_VIEW_H
#define GPUFIR_RESPONSE_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "response_svg.h"

/** The most distinct output responses whose peak and delay a report computes (~10 ms each). */
#define GF_RESPONSE_VIEW_STATS_MAX 16u
/** The most curves a plot draws (~28 KB of SVG each). */
#define GF_RESPONSE_VIEW_PLOT_MAX 16u

struct gf_response_view {
	uint32_t outputs, taps, firs;
	uint32_t n_distinct;
	float *sums;	     /**< n_distinct x taps: each distinct sum, in the order of its first output */
	uint32_t *of_output; /**< per output: the index of its sum in @c sums */
	uint32_t *n_firs;    /**< per output: the FIRs summed into it */
	double *abs_sum;     /**< per output: sum over its FIRs of sum |h|, what any full-scale input
				  can reach */
};

/**
 * The view of @p firs FIRs of @p taps taps (coeffs[p * taps + k]), FIR p adding into output
 * @p fir_out[p] (< @p outputs; checked: GF_E_INVAL otherwise).
 * @return 0, GF_E_INVAL or GF_E_NOMEM
 */
int gf_response_view_new(struct gf_response_view *v, const float *coeffs, uint32_t firs, uint32_t taps,
			 const uint32_t *fir_out, uint32_t outputs);
void gf_response_view_free(struct gf_response_view *v);

/** A view's plot: what gf_response_svg draws, its title and its legend's labels. */
struct gf_response_view_plot {
	struct gf_plot_taps t;
	char title[512];
	char (*label)[48];
	const char **labels;
};

/**
 * The plot of @p v at @p rate for the config @p source (NULL: the built-in default): the
 * first GF_RESPONSE_VIEW_PLOT_MAX distinct sums, each labelled with its outputs, the title
 * saying how many were left out. @p v must outlive @p p.
 * @return 0 or GF_E_NOMEM
 */
int gf_response_view_plot(const struct gf_response_view *v, uint32_t rate, const char *source,
			  struct gf_response_view_plot *p);
void gf_response_view_plot_free(struct gf_response_view_plot *p);

/**
 * A filter set drawn as --plot and the daemon's /response.svg draw it: each FIR of a plain
 * set (@p fir_out NULL), a mixer per output (gf_response_view_plot). Into @p out, or where
 * @p out is NULL into a malloc'ed *@p str of *@p len bytes.
 * @return 0, GF_E_NOMEM or GF_E_IO
 */
int gf_response_plot_set(FILE *out, char **str, size_t *len, const float *coeffs, uint32_t firs,
			 uint32_t taps, const uint32_t *fir_out, uint32_t outputs, uint32_t rate,
			 const char *source);

#endif
