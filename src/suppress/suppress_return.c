/*
 * The return to the GPU after a switch to a CPU standby (suppress_return.h):
 * the wait before each try, doubled after each failed probe.
 */
#include "suppress_return.h"

#include "clock.h"

void gf_suppress_return_init(struct gf_suppress_return *r, uint64_t first_ns)
{
	r->first_ns = first_ns;
	r->step_ns = first_ns;
	r->next_ns = 0;
}

void gf_suppress_return_reset(struct gf_suppress_return *r)
{
	r->next_ns = 0;
}

enum gf_suppress_return_step gf_suppress_return_try(struct gf_suppress_return *r, gf_suppress_probe_fn probe,
						    void *arg, int *err)
{
	uint64_t now = gf_now_ns();
	if (!r->next_ns) {
		r->step_ns = r->first_ns;
		r->next_ns = now + r->step_ns;
		return GF_SUPPRESS_RETURN_FIRST;
	}
	if (now < r->next_ns)
		return GF_SUPPRESS_RETURN_WAIT;
	*err = probe(arg);
	if (*err) {
		uint64_t cap = r->first_ns * GF_SUPPRESS_RETURN_MAX_STEPS;
		r->step_ns = 2 * r->step_ns < cap ? 2 * r->step_ns : cap;
		r->next_ns = gf_now_ns() + r->step_ns; /* from the probe's end: it may take a while */
	} else {
		r->next_ns = 0;
	}
	return GF_SUPPRESS_RETURN_PROBED;
}
