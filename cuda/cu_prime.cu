/*
 * Priming (backend.h prime): the newest taps-1 frames of history loaded into
 * a new instance's state in one batch before its first block, with bounded
 * waits (docs/cuda.md, "Life of an instance").
 */
#include "clock.h"
#include "cu_fft.cuh"
#include "cu_fused.cuh"
#include "cu_persist.cuh"

#define PRIME_STEP_DEADLINE_NS 2000000000ull /* a hung GPU must not hold the caller */

/* Wait for everything enqueued on s_comp so far, within PRIME_STEP_DEADLINE_NS. */
static int drain_comp(struct gf_cu_inst *in)
{
	CU_RET(&in->eb, cudaEventRecord(in->ev_done, in->s_comp));
	return gf_cu_wait_event(in, in->ev_done, gf_now_ns() + PRIME_STEP_DEADLINE_NS);
}

/* Load the newest taps-1 history frames into the state without producing
 * output, batched: one upload, then the line (and the fused path's ring)
 * filled by one kernel and the FFT's spectra by one gather and one batched
 * R2C a pass, then one bounded wait. Stream-ordered temporary device memory.
 * The engine calls it on the control thread, never on the audio thread. The
 * upload is from pageable memory: the driver stages it and waits for this
 * instance's stream (new, idle) first. */
static int prime_call(struct gf_cu_inst *in, const float *history, uint32_t frames)
{
	struct gf_errbuf *eb = &in->eb;
	uint32_t n = frames < in->taps - 1 ? frames : in->taps - 1;
	const float *src = history + (size_t)(frames - n) * in->channels;
	cudaStream_t s = in->s_comp;
	float *d_hist = NULL;
	int err = gf_cu_use_device(in->dev, eb);
	/* The kernel is held for the prime as for a call (a step-aside waits). */
	int pk = !err && in->persist ? gf_cu_pk_take(in) : 0;
	if (pk < 0)
		return GF_E_BUSY;
	if (!err)
		err = gf_cu_reset_state(in, eb);
	if (!err && n > 0) {
		size_t bytes = (size_t)n * in->channels * sizeof(float);
		err = gf_cu_dmalloc((void **)&d_hist, bytes, s, eb);
		if (!err)
			err = CU_TRY(eb, cudaMemcpyAsync(d_hist, src, bytes, cudaMemcpyHostToDevice, s));
		if (!err)
			err = gf_cu_line_load(&in->line, in->channels, d_hist, n, s, eb);
		if (!err && in->fft)
			err = gf_cu_fft_prime(in->fft, in, d_hist, n, s, eb);
		if (!err && in->live)
			err = gf_cu_live_load(in->live, d_hist, n, s, eb);
		uint32_t staged = 0; /* the kernel loads its own buffer once the copy is done */
		if (!err && pk)
			err = gf_cu_persist_stage(in->persist, d_hist, n, s, &staged, eb);
		if (!err && pk && in->hybrid)
			err = gf_cu_hybrid_prime(in->hybrid, in, d_hist, n, eb);
		if (!err && pk)
			err = drain_comp(in);
		if (!err && pk)
			err = gf_cu_persist_load(in->persist, staged, n, gf_now_ns() + PRIME_STEP_DEADLINE_NS,
					      eb);
		gf_cu_dfree(d_hist, s);
	} else if (!err && pk) {
		err = gf_cu_persist_load(in->persist, 0, 0, gf_now_ns() + PRIME_STEP_DEADLINE_NS, eb);
	}
	if (pk)
		err = gf_cu_pk_end_call(in, err, gf_now_ns() + PRIME_STEP_DEADLINE_NS);
	if (pk && err == GF_E_TIMEOUT) /* a prime is not collected later: the engine gives it up */
		__atomic_store_n(&in->pk_state, GF_CU_PK_LOST, __ATOMIC_RELEASE);
	return err ? err : drain_comp(in);
}

/* A missed deadline leaves the instance's work in flight: from then on host
 * memory it may still reach is never unregistered (gf_cu_unpin). */
int gf_cu_prime(void *inst, const float *history, uint32_t frames)
{
	struct gf_cu_inst *in = (struct gf_cu_inst *)inst;
	int err = prime_call(in, history, frames);
	if (err == GF_E_TIMEOUT)
		gf_cu_doubt(in);
	return err;
}
