/* FFTW's planner behind one lock (fftw_plan.h says why). */
#include "fftw_plan.h"

#include <pthread.h>

static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;

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
