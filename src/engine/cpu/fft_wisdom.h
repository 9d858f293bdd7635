/**
 * @file fft_wisdom.h
 * FFTW wisdom for the CPU backend's single-precision plans, kept in a file
 * beside the cost cache (cost.h: "fftwf-wisdom" in the same folder; off when
 * the cost cache is). Planning an FFTW_ESTIMATE pair for one size costs about
 * 2.5 ms of a process's start-up, mostly the planner's search; with the
 * wisdom a process replays the same choices (the same plans, so the same
 * output) in about 0.1 ms. Engine-internal.
 *
 * Threads: control thread, under the caller's FFTW planner lock (FFTW's
 * planner is not thread-safe). Never on the audio path: file I/O.
 */
#ifndef GPUFIR_FFT_WISDOM_H
#define GPUFIR_FFT_WISDOM_H

#include <fftw3.h>

#include "fftwf_lock.h" /* every single-precision plan is made and destroyed under it */

/** Import the wisdom file once per process (no file, or one FFTW refuses: none). */
void gf_fft_wisdom_load(void);

/** Write the process's wisdom to the file (atomically), after a plan the wisdom lacked. */
void gf_fft_wisdom_store(void);

/**
 * The CPU backend's plan pair for @p n points, out of place between @p time
 * and @p spec (r2c FFTW_ESTIMATE | FFTW_PRESERVE_INPUT, c2r FFTW_ESTIMATE):
 * from the wisdom where it has them, else planned and the wisdom stored.
 * @p r2c / @p c2r are NULL where FFTW fails.
 */
void gf_fft_wisdom_plan_pair(int n, float *time, fftwf_complex *spec, fftwf_plan *r2c, fftwf_plan *c2r);

#endif
