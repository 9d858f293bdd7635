/* FFTW's planner behind one lock (fftw_plan.h says why). */
#include "fftw_plan.h"

#include <pthread.h>
#include <stdio.h>

#include "memlimit.h"

static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;

int gf_fft_room(size_t n, uint64_t arrays, const char *what, struct gf_errbuf *eb)
{
	char full[256];
	snprintf(full, sizeof(full), "%s (an FFT of %zu points)", what, n);
	return gf_mem_check(arrays + gf_mem_fft_plan_bytes(n, sizeof(double)), full, eb);
}

int gf_fft_nomem(size_t n, const char *what, struct gf_errbuf *eb)
{
	gf_errbuf_set(eb, "%s (an FFT of %zu points): out of memory", what, n);
	return GF_E_NOMEM;
}

fftw_plan gf_fftw_plan_r2c(int n, double *in, fftw_complex *out)
{
	pthread_mutex_lock(&planner_lock);
	fftw_plan p = fftw_plan_dft_r2c_1d(n, in, out, FFTW_ESTIMATE);
	pthread_mutex_unlock(&planner_lock);
	return p;
}

fftw_plan gf_fftw_plan_c2r(int n, fftw_complex *in, double *out)
{
	pthread_mutex_lock(&planner_lock);
	fftw_plan p = fftw_plan_dft_c2r_1d(n, in, out, FFTW_ESTIMATE);
	pthread_mutex_unlock(&planner_lock);
	return p;
}

void gf_fftw_destroy(fftw_plan p)
{
	if (!p)
		return;
	pthread_mutex_lock(&planner_lock);
	fftw_destroy_plan(p);
	pthread_mutex_unlock(&planner_lock);
}
