/*
 * The helpers wait for a new generation of work on one condition variable
 * and count themselves done on another: one job in flight at a time, so a
 * generation number and a count of parts outstanding are the whole state.
 * The mutex orders each job's data before the helpers read it and their
 * output before the caller's return (release/acquire through the lock).
 */
#include "suppress_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct helper {
	struct gf_suppress_pool *pool;
	uint32_t part;
	pthread_t th;
};

struct gf_suppress_pool {
	uint32_t parts, started; /* started: helpers running (free() joins these) */
	struct helper *h;	 /* parts - 1 */
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	uint64_t gen;	  /* the job's number: a helper runs each once */
	uint32_t pending; /* helpers' parts of this job not yet done */
	int quit;
	gf_suppress_pool_fn fn;
	void *arg;
};

static void *helper_main(void *a)
{
	struct helper *h = a;
	struct gf_suppress_pool *p = h->pool;
	uint64_t seen = 0;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->quit && p->gen == seen)
			pthread_cond_wait(&p->go, &p->mu);
		if (p->quit)
			break;
		seen = p->gen;
		gf_suppress_pool_fn fn = p->fn;
		void *arg = p->arg;
		pthread_mutex_unlock(&p->mu);
		fn(arg, h->part, p->parts);
		pthread_mutex_lock(&p->mu);
		if (--p->pending == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

void gf_suppress_pool_free(struct gf_suppress_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	for (uint32_t k = 0; k < p->started; k++)
		pthread_join(p->h[k].th, NULL);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->mu);
	free(p->h);
	free(p);
}

int gf_suppress_pool_new(uint32_t parts, struct gf_suppress_pool **out, struct gf_errbuf *eb)
{
	*out = NULL;
	struct gf_suppress_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return GF_E_NOMEM;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	p->parts = parts < 2 ? 2 : parts;
	if (!(p->h = calloc(p->parts - 1, sizeof(*p->h)))) {
		gf_suppress_pool_free(p);
		return GF_E_NOMEM;
	}
	for (uint32_t k = 0; k < p->parts - 1; k++) {
		p->h[k] = (struct helper){.pool = p, .part = k + 1};
		int e = pthread_create(&p->h[k].th, NULL, helper_main, &p->h[k]);
		if (e) {
			gf_errbuf_set(eb, "noise suppressor: cannot start helper thread %u of %u (%s)", k + 1,
				      p->parts - 1, strerror(e));
			gf_suppress_pool_free(p);
			return e == ENOMEM ? GF_E_NOMEM : GF_E_SYSTEM;
		}
		p->started++;
	}
	*out = p;
	return 0;
}

uint32_t gf_suppress_pool_parts(const struct gf_suppress_pool *p)
{
	return p ? p->parts : 1;
}

void gf_suppress_pool_run(struct gf_suppress_pool *p, gf_suppress_pool_fn fn, void *arg)
{
	pthread_mutex_lock(&p->mu);
	p->fn = fn;
	p->arg = arg;
	p->pending = p->parts - 1;
	p->gen++;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	fn(arg, 0, p->parts);
	pthread_mutex_lock(&p->mu);
	while (p->pending)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}
