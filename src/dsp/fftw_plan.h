/*
 * FFTW (double precision) plans for the filter mathematics' transforms (minimum
 * phase, pre-convolution, denoise, hum). FFTW's planner is not thread-safe,
 * and the daemon builds filters on its build thread while the control thread
 * may build too (a CPU engine replacing an abandoned one): plans are made and
 * destroyed under one lock here. Executing a plan needs no lock. Any thread.
 */
#ifndef GPUFIR_FFTW_PLAN_H
#define GPUFIR_FFTW_PLAN_H

#include <fftw3.h>

/** fftw_plan_dft_r2c_1d(n, in, out, FFTW_ESTIMATE) under the planner lock; NULL on failure. */
fftw_plan gf_fftw_plan_r2c(int n, double *in, fftw_complex *out);
/** fftw_plan_dft_c2r_1d(n, in, out, FFTW_ESTIMATE) under the planner lock; NULL on failure. */
fftw_plan gf_fftw_plan_c2r(int n, fftw_complex *in, double *out);
/** fftw_destroy_plan under the planner lock. Accepts NULL. */
void gf_fftw_destroy(fftw_plan p);

#endif
