/* The single-precision FFTW planner's lock (fftwf_lock.h says why). */
#include "fftwf_lock.h"

#include <pthread.h>

static pthread_mutex_t g_planner_lock = PTHREAD_MUTEX_INITIALIZER;

void gf_fftwf_planner_lock(void)
{
	pthread_mutex_lock(&g_planner_lock);
}

void gf_fftwf_planner_unlock(void)
{
	pthread_mutex_unlock(&g_planner_lock);
}
