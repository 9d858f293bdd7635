/*
 * FFTW (double precision) plans for the filter mathematics' transforms (minimum
 * phase, pre-convolution, denoise, hum). FFTW's planner is not thread-safe,
 * and the daemon builds filters on its build thread while the control thread
 * may build too (a CPU engine replacing an abandoned one): plans are made and
 * destroyed under one lock here. Executing a plan needs no lock. Any thread.
 *
 * FFTW calls abort() when one of its own allocations fails (its planner's
 * tables, twiddle factors): a filter that passed the config's memory
 * estimate would then take the process down, the daemon in a reload
 * included. So every caller checks a transform's memory first (gf_fft_room:
 * its arrays and FFTW's plans, memlimit.h) and fails with that message.
 */
#ifndef GPUFIR_FFTW_PLAN_H
#define GPUFIR_FFTW_PLAN_H

#include <fftw3.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/**
 * Whether a forward and inverse real transform of @p n points fit, with
 * @p arrays bytes the caller allocates for them.
 * @return 0, or GF_E_NOMEM with "WHAT (an FFT of N points) needs about ..."
 *         in @p eb (may be NULL)
 */
int gf_fft_room(size_t n, uint64_t arrays, const char *what, struct gf_errbuf *eb);

/** Set "WHAT (an FFT of N points): out of memory" in @p eb; @return GF_E_NOMEM. For an
 *  allocation or plan that failed after gf_fft_room (memory taken meanwhile). */
int gf_fft_nomem(size_t n, const char *what, struct gf_errbuf *eb);
/** fftw_plan_dft_r2c_1d(n, in, out, FFTW_ESTIMATE) under the planner lock; NULL on failure.
 *  gf_fft_room first: FFTW aborts when its allocation fails. */
fftw_plan gf_fftw_plan_r2c(int n, double *in, fftw_complex *out);
/** fftw_plan_dft_c2r_1d(n, in, out, FFTW_ESTIMATE), as gf_fftw_plan_r2c. */
fftw_plan gf_fftw_plan_c2r(int n, fftw_complex *in, double *out);
/** fftw_destroy_plan under the planner lock. Accepts NULL. */
void gf_fftw_destroy(fftw_plan p);

#endif
