/*
 * The helper threads of the neural stage and of the suppressor's bank
 * (neural_pool.h). A job is started by one
 * semaphore post per helper; the helper that finishes last posts `done`, the
 * one semaphore the owner waits on, with a deadline on CLOCK_MONOTONIC (the
 * clock of gf_now_ns()). The counter of parts still running is the only
 * shared state besides the semaphores, whose post and wait order the memory:
 * what a helper wrote is visible to the owner once it has taken `done`.
 */
#define _GNU_SOURCE /* sem_clockwait */
#include "neural_pool.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct helper {
	struct gf_neural_pool *p;
	uint32_t part;
	sem_t go;
	pthread_t th;
	int inited, started; /* go made; th running (free() joins it) */
};

struct gf_neural_pool {
	uint32_t parts;
	gf_neural_pool_fn fn;
	void *arg;
	struct helper *h;
	sem_t done;
	_Atomic uint32_t running; /* parts of the job in flight not yet finished */
	_Atomic int stop;
	int busy; /* owner: a job started and not yet seen done */
};

static void *helper_main(void *arg)
{
	struct helper *h = arg;
	struct gf_neural_pool *p = h->p;
	for (;;) {
		while (sem_wait(&h->go) != 0)
			;
		if (atomic_load(&p->stop))
			return NULL;
		p->fn(p->arg, h->part, p->parts);
		if (atomic_fetch_sub(&p->running, 1) == 1)
			sem_post(&p->done);
	}
}

int gf_neural_pool_new(uint32_t parts, gf_neural_pool_fn fn, void *arg, struct gf_neural_pool **out,
		       struct gf_errbuf *eb)
{
	*out = NULL;
	struct gf_neural_pool *p = calloc(1, sizeof(*p));
	if (!p || !(p->h = calloc(parts, sizeof(*p->h)))) {
		free(p);
		gf_errbuf_set(eb, "cannot allocate %u helper threads' state", parts);
		return GF_E_NOMEM;
	}
	p->parts = parts;
	p->fn = fn;
	p->arg = arg;
	sem_init(&p->done, 0, 0);
	for (uint32_t k = 0; k < parts; k++) {
		struct helper *h = &p->h[k];
		h->p = p;
		h->part = k;
		sem_init(&h->go, 0, 0);
		h->inited = 1;
		int e = pthread_create(&h->th, NULL, helper_main, h);
		if (e) {
			gf_errbuf_set(eb, "helper thread %u of %u could not start: %s", k + 1, parts,
				      strerror(e));
			gf_neural_pool_free(p);
			return GF_E_SYSTEM;
		}
		h->started = 1;
	}
	*out = p;
	return 0;
}

void gf_neural_pool_free(struct gf_neural_pool *p)
{
	if (!p)
		return;
	gf_neural_pool_wait(p, 0);
	atomic_store(&p->stop, 1);
	for (uint32_t k = 0; k < p->parts; k++)
		if (p->h[k].started)
			sem_post(&p->h[k].go);
	for (uint32_t k = 0; k < p->parts; k++) {
		if (p->h[k].started)
			pthread_join(p->h[k].th, NULL);
		if (p->h[k].inited)
			sem_destroy(&p->h[k].go);
	}
	sem_destroy(&p->done);
	free(p->h);
	free(p);
}

void gf_neural_pool_start(struct gf_neural_pool *p)
{
	atomic_store(&p->running, p->parts);
	p->busy = 1;
	for (uint32_t k = 0; k < p->parts; k++)
		sem_post(&p->h[k].go);
}

int gf_neural_pool_wait(struct gf_neural_pool *p, uint64_t deadline_ns)
{
	if (!p->busy)
		return 1;
	int r;
	if (!deadline_ns) {
		while ((r = sem_wait(&p->done)) != 0 && errno == EINTR)
			;
	} else {
		struct timespec ts = {.tv_sec = (time_t)(deadline_ns / 1000000000u),
				      .tv_nsec = (long)(deadline_ns % 1000000000u)};
		while ((r = sem_clockwait(&p->done, CLOCK_MONOTONIC, &ts)) != 0 && errno == EINTR)
			;
	}
	if (r != 0)
		return 0;
	p->busy = 0;
	return 1;
}

int gf_neural_pool_busy(const struct gf_neural_pool *p)
{
	return p->busy;
}

uint32_t gf_neural_pool_parts(const struct gf_neural_pool *p)
{
	return p->parts;
}
