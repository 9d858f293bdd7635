/**
 * @file response_svg.h
 * A filter set's response as an SVG document: per FIR |H| in dB and the
 * group delay in ms over 10 Hz..rate/2 (400 log-spaced points), and the taps
 * over time. Each panel's <g> carries its axis mapping as data-* attributes,
 * and each curve its points' exact x values, so a script can read values
 * back. --plot writes it to a file; the daemon renders it on its build
 * thread and serves it beside the control page.
 *
 * Any thread; allocates (never on the audio path). The cost is bounded for
 * any length: the frequency points come from gf_response_curve.
 */
#ifndef GPUFIR_RESPONSE_SVG_H
#define GPUFIR_RESPONSE_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"

struct gf_plot_taps {
	const float *coeffs; /**< channels x taps, FIR-major: coeffs[c * taps + k] */
	uint32_t channels, taps;
	uint32_t rate;		   /**< Hz */
	const char *legend;	   /**< the legend's word before each number: "channel" (NULL) or "path" */
	const char *const *labels; /**< per FIR, its legend in full (NULL: the word and its number) */
};

/** The plot's title in @p buf: the file name of @p source (NULL: the built-in default), the rate,
 *  the FIRs and the taps, as "room.conf: 48000 Hz, 2 channels, 65536 taps". */
void gf_response_svg_title(char *buf, size_t size, const char *source, const struct gf_plot_taps *t);

/** Draw @p t into @p out under @p title. @return 0, GF_E_NOMEM or GF_E_IO */
int gf_response_svg(FILE *out, const struct gf_plot_taps *t, const char *title);

/** The same as a malloc'ed string of *@p len bytes, or NULL with *@p err (GF_E_NOMEM). */
char *gf_response_svg_string(const struct gf_plot_taps *t, const char *title, size_t *len, int *err);

#endif
