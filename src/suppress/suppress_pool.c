/*
 * The helpers are the neural stage's pool (neural_pool.h): semaphores to
 * start a job and to see it done, which also order the job's data before
 * the helpers read it and their output before the caller's return. Here
 * part 0 runs on the caller's thread between the start and an unbounded
 * wait, and the job's function is set per call.
 */
#include "suppress_pool.h"

#include <stdio.h>
#include <stdlib.h>

#include "neural_pool.h"

struct gf_suppress_pool {
	uint32_t parts;
	struct gf_neural_pool *helpers; /* parts - 1 of them: part k + 1 on helper k */
	gf_suppress_pool_fn fn;		/* this job's, set before the helpers start */
	void *arg;
};

/* Helper @p k's share of the job in flight (gf_neural_pool_fn). */
static void helper_part(void *pool, uint32_t k, uint32_t helpers)
{
	(void)helpers;
	struct gf_suppress_pool *p = pool;
	p->fn(p->arg, k + 1, p->parts);
}

void gf_suppress_pool_free(struct gf_suppress_pool *p)
{
	if (!p)
		return;
	gf_neural_pool_free(p->helpers);
	free(p);
}

int gf_suppress_pool_new(uint32_t parts, struct gf_suppress_pool **out, struct gf_errbuf *eb)
{
	*out = NULL;
	struct gf_suppress_pool *p = calloc(1, sizeof(*p));
	if (!p)
		return GF_E_NOMEM;
	p->parts = parts < 2 ? 2 : parts;
	int err = gf_neural_pool_new(p->parts - 1, helper_part, p, &p->helpers, eb);
	if (err) {
		char why[sizeof(eb->msg)];
		snprintf(why, sizeof(why), "%s", eb->msg);
		gf_errbuf_set(eb, "noise suppressor: %s", why);
		free(p);
		return err;
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
	p->fn = fn;
	p->arg = arg;
	gf_neural_pool_start(p->helpers);
	fn(arg, 0, p->parts);
	gf_neural_pool_wait(p->helpers, 0);
}
