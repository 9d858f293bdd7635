/**
 * @file fir_fft.h
 * Linear convolution of two FIRs by FFT, in double precision: how a chain of
 * filters on one path is pre-convolved into one. Control thread (allocates).
 */
#ifndef GPUFIR_FIR_FFT_H
#define GPUFIR_FIR_FFT_H

#include <stdint.h>

#include "error.h"

/**
 * y[0 .. na+nb-2] = a * b by FFT (double precision).
 * @return 0 or GF_E_NOMEM (what its FFTs need against what is available, in
 *         @p eb, which may be NULL)
 */
int gf_fir_convolve_fft(const double *a, uint32_t na, const double *b, uint32_t nb, double *y,
			struct gf_errbuf *eb);

#endif
