/*
 * One block through the chain (chain_run.h): engine, suppressor bank, gain.
 */
#include "chain_run.h"

/* The engine's step; offline a backend failing mid-file hands the call to the CPU, redone from
 * the engine's copy of its input, so the output stays exact. */
static int engine_step(const struct gf_chain_run *c, const float *in, float *out, uint32_t frames,
		       uint64_t deadline_ns)
{
	struct gf_engine *e = c->engine;
	int err =
		in ? gf_engine_process_by(e, in, out, frames, deadline_ns) : gf_engine_flush(e, out, frames);
	if (!c->retry || !err || !gf_engine_failed(e))
		return err;
	gf_engine_reap(e);
	return gf_engine_retry(e, out, frames) == 0 ? 0 : err;
}

int gf_chain_process(const struct gf_chain_run *c, const float *in, const float *meter_in, float *out,
		     uint32_t frames, uint64_t deadline_ns, int *sup_err)
{
	int err = engine_step(c, in, out, frames, deadline_ns), serr = 0;
	if (sup_err)
		*sup_err = 0;
	if (err && c->retry) /* offline: the chunk fails the file, the suppressor is not run */
		return err;
	/* Even on a muted block, so that it stays in step with the stream; but a muted block is a gap
	 * to it, which its noise estimate does not learn from. The ring-out is audio. */
	if (c->suppress && in && gf_engine_muted(c->engine))
		serr = gf_suppress_bank_gap_by(c->suppress, out, frames, deadline_ns);
	else if (c->suppress)
		serr = gf_suppress_bank_process_by(c->suppress, out, frames, deadline_ns);
	if (sup_err)
		*sup_err = serr;
	if (serr && c->retry)
		return serr;
	/* Volume, mute, meters: last, so the meters see what is played. */
	if (c->gain)
		gf_gain_stage_process_io(c->gain, meter_in, c->in_channels, out, c->out_channels, frames);
	return err;
}
