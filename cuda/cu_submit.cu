/*
 * A call's submit and finish (backend.h; the audio thread). Which path a call
 * takes: the persistent kernel, the fused kernel, host-mapped staging for
 * small FFT calls, one staging copy each way for other calls of one chunk
 * (every live block), or the pipeline (cu_pipeline.cu) for larger calls.
 * finish polls an event or completion words until the block's deadline,
 * never a blocking synchronize: a hung kernel must not hang the audio thread.
 * A call past its deadline stays in flight and a later finish collects it;
 * every path but the pipeline copies its input at submit, so it can.
 */
#include <sched.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "cu_common.cuh"

/* Enqueue one chunk already in d_in on s: line update, convolution into d_out
 * (none when priming). Advances the stream position. */
int gf_cu_run_chunk(struct gf_cu_inst *in, const float *d_in, float *d_out, uint32_t frames, cudaStream_t s,
		    struct gf_errbuf *eb)
{
	int64_t j0;
	bool zero = d_out && in->algo == GF_ALGO_DIRECT && gf_cu_direct_needs_zero(in->direct, frames);
	bool fft = in->algo == GF_ALGO_FFT;
	int err = gf_cu_line_append(&in->line, in->channels, d_in, frames, fft, zero ? d_out : NULL, s, eb,
				    &j0);
	if (!err) {
		if (!fft)
			err = d_out ? gf_cu_direct_run(in->direct, in, j0, frames, d_out, s, eb) : 0;
		else
			err = gf_cu_fft_run(in->fft, in, d_in, j0, frames, d_out, s, eb);
	}
	if (!err)
		in->line.pos += frames;
	return err;
}

/* A small FFT call through host-mapped staging: the kernels read the input
 * from and write the output to host memory (no copies), the last one writes
 * completion words that finish polls. */
static int submit_mapped(struct gf_cu_inst *in, const float *inp, uint32_t frames)
{
	memcpy(in->m_in, inp, (size_t)frames * in->channels * sizeof(float));
	unsigned seq = ++in->seq;
	in->sub_words = gf_cu_fft_set_done(in->fft, in->m_done, seq, frames);
	int err = gf_cu_run_chunk(in, in->m_in, in->m_out, frames, in->s_comp, &in->eb);
	if (err)
		gf_cu_fft_set_done(in->fft, NULL, 0, 0);
	return err;
}

/*
 * Poll @p ev until it has completed or @p deadline_ns (CLOCK_MONOTONIC) has
 * passed: never a blocking synchronize, which waits forever on a hung
 * kernel. Yields for the first SPIN_NS (a live block's round trip is tens of
 * microseconds), then sleeps in short steps.
 */
#define WAIT_SPIN_NS 250000u
#define WAIT_STEP_NS 20000
int gf_cu_wait_event_eb(cudaEvent_t ev, uint64_t deadline_ns, struct gf_errbuf *eb)
{
	uint64_t t0 = gf_now_ns();
	for (;;) {
		cudaError_t e = cudaEventQuery(ev);
		if (e == cudaSuccess)
			return 0;
		if (e != cudaErrorNotReady) {
			(void)cudaGetLastError();
			gf_errbuf_set(eb, "cuda: %s", cudaGetErrorString(e));
			return GF_E_CUDA;
		}
		uint64_t now = gf_now_ns();
		if (now >= deadline_ns) {
			gf_errbuf_set(eb, "cuda: work still in flight at the deadline");
			return GF_E_TIMEOUT;
		}
		if (now - t0 < WAIT_SPIN_NS) {
			sched_yield();
		} else {
			struct timespec ts = {0, WAIT_STEP_NS};
			nanosleep(&ts, NULL);
		}
	}
}

int gf_cu_wait_event(struct gf_cu_inst *in, cudaEvent_t ev, uint64_t deadline_ns)
{
	return gf_cu_wait_event_eb(ev, deadline_ns, &in->eb);
}

int gf_cu_stream_idle_by(cudaStream_t s, uint64_t deadline_ns)
{
	for (;;) {
		cudaError_t e = cudaStreamQuery(s);
		if (e != cudaErrorNotReady) {
			(void)cudaGetLastError(); /* a failed stream runs nothing either */
			return 0;
		}
		if (gf_now_ns() >= deadline_ns)
			return -1;
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
}

/* One chunk on s_comp alone: the low-latency path of every live block. Enqueues
 * upload, kernels and download; finish waits for ev_done. */
static int submit_single(struct gf_cu_inst *in, const float *inp, uint32_t frames)
{
	struct gf_errbuf *eb = &in->eb;
	size_t bytes = (size_t)frames * in->channels * sizeof(float);
	memcpy(in->h_in[0], inp, bytes);
	CU_RET(eb, cudaMemcpyAsync(in->d_in[0], in->h_in[0], bytes, cudaMemcpyHostToDevice, in->s_comp));
	int err = gf_cu_run_chunk(in, in->d_in[0], in->d_out[0], frames, in->s_comp, eb);
	if (err)
		return err;
	CU_RET(eb, cudaMemcpyAsync(in->h_out[0], in->d_out[0], bytes, cudaMemcpyDeviceToHost, in->s_comp));
	CU_RET(eb, cudaEventRecord(in->ev_done, in->s_comp));
	return 0;
}

/* Which path a call takes: live blocks of the direct algorithm the fused
 * kernel; small FFT calls mapped staging; other small calls one staging copy
 * each way (cheaper than asking the driver whether the caller's memory is
 * pinned); large calls the pipeline (run in finish). */
static int submit_call(struct gf_cu_inst *in, const float *inp, uint32_t frames)
{
	int pk = in->persist ? gf_cu_pk_take(in) : 0;
	if (pk < 0)
		return GF_E_BUSY;
	if (pk)
		in->sub_kind = GF_CU_SUB_PERSIST;
	else if (in->live && in->algo == GF_ALGO_DIRECT)
		in->sub_kind = GF_CU_SUB_FUSED;
	else if (gf_cu_small_call(in, frames) && in->m_in && in->algo == GF_ALGO_FFT)
		in->sub_kind = GF_CU_SUB_MAPPED;
	else if (gf_cu_small_call(in, frames))
		in->sub_kind = GF_CU_SUB_SINGLE;
	else
		in->sub_kind = GF_CU_SUB_PIPELINED;
	switch (in->sub_kind) {
	case GF_CU_SUB_PERSIST:
		return in->hybrid ? gf_cu_hybrid_submit(in->hybrid, in, inp, frames)
				  : gf_cu_persist_submit(in->persist, inp, frames);
	case GF_CU_SUB_FUSED:
		return gf_cu_live_submit(in->live, inp, frames, &in->eb);
	case GF_CU_SUB_MAPPED:
		return submit_mapped(in, inp, frames);
	case GF_CU_SUB_SINGLE:
		return submit_single(in, inp, frames);
	default:
		return 0;
	}
}

static int finish_call(struct gf_cu_inst *in, float *outp, uint32_t frames, uint64_t deadline_ns)
{
	int err;
	switch (in->sub_kind) {
	case GF_CU_SUB_PERSIST:
		err = in->hybrid ? gf_cu_hybrid_finish(in->hybrid, in, outp, frames, deadline_ns)
				 : gf_cu_persist_finish(in->persist, outp, frames, deadline_ns, &in->eb);
		return gf_cu_pk_end_call(in, err, deadline_ns);
	case GF_CU_SUB_FUSED:
		return gf_cu_live_finish(in->live, outp, frames, deadline_ns, &in->eb);
	case GF_CU_SUB_MAPPED:
		err = gf_cu_wait_words(in->m_done, in->sub_words, in->seq, in->s_comp, deadline_ns, &in->eb);
		if (!err)
			memcpy(outp, in->m_out, (size_t)frames * in->channels * sizeof(float));
		return err;
	case GF_CU_SUB_SINGLE:
		err = gf_cu_wait_event(in, in->ev_done, deadline_ns);
		if (!err)
			memcpy(outp, in->h_out[0], (size_t)frames * in->channels * sizeof(float));
		return err;
	default:
		return gf_cu_process_pipelined(in, in->sub_in, outp, frames, deadline_ns);
	}
}

/* A whole call (calibration): submit, then finish with a generous deadline. */
int gf_cu_process_call(struct gf_cu_inst *in, const float *inp, float *outp, uint32_t frames)
{
	int err = gf_cu_use_device(in->dev, &in->eb);
	in->sub_in = inp;
	if (!err)
		err = submit_call(in, inp, frames);
	return err ? err : finish_call(in, outp, frames, gf_now_ns() + GF_CU_WAIT_NS);
}

/* GPUFIR_CUDA_HANG_AFTER: a kernel that spins on a host-mapped flag nobody
 * sets, bounded by the GPU clock to a few seconds so the device recovers. */
__global__ void hang_kernel(const volatile int *flag, long long cycles)
{
	long long t0 = clock64();
	while (!*flag && clock64() - t0 < cycles) {
	}
}

/*
 * Start a call. A live block (one chunk) is enqueued here whole; a larger
 * call runs the pipeline in finish(), whose waits then share the deadline.
 */
int gf_cu_submit(void *inst, const float *inp, uint32_t frames)
{
	struct gf_cu_inst *in = (struct gf_cu_inst *)inst;
	in->sub_frames = 0;
	if (frames < 1 || frames > in->max_block)
		return GF_E_INVAL;
	if (in->fail_after >= 0 && in->calls >= (uint64_t)in->fail_after) {
		gf_errbuf_set(&in->eb, "cuda: failure injected by GPUFIR_CUDA_FAIL_AFTER=%ld",
			      in->fail_after);
		return GF_E_CUDA;
	}
	bool hang = in->hang_after >= 0 && in->calls == (uint64_t)in->hang_after;
	in->calls++;
	int err = gf_cu_use_device(in->dev, &in->eb);
	if (err)
		return err;
	if (hang && in->hang_tail && in->hybrid) { /* the launcher enqueues it: no CUDA call here */
		gf_cu_hybrid_stall_next(in->hybrid, in->d_hang, in->hang_cycles);
	} else if (hang && gf_cu_pk_active(in)) {
		gf_cu_persist_hang_next(in->persist, in->hang_cycles);
	} else if (hang) { /* everything after it on s_comp waits for it */
		hang_kernel<<<1, 1, 0, in->s_comp>>>(in->d_hang, in->hang_cycles);
		CU_RET(&in->eb, cudaGetLastError());
	}
	in->sub_in = inp;
	uint64_t t0 = in->ev_split[0] ? gf_now_ns() : 0;
	if (t0)
		CU_RET(&in->eb, cudaEventRecord(in->ev_split[0], in->s_comp));
	err = submit_call(in, inp, frames);
	if (!err && t0) {
		CU_RET(&in->eb, cudaEventRecord(in->ev_split[1], in->s_comp));
		in->split_enqueue_ns = gf_now_ns() - t0;
	}
	if (!err)
		in->sub_frames = frames;
	return err;
}

/*
 * A call that misses its deadline stays in flight (backend.h): sub_frames is
 * kept, the next finish polls the same event or words and returns the same
 * output, and the instance is in doubt meanwhile (gf_cuda_unpin waits for
 * nothing then). A large call's pipeline runs in finish and reads the
 * caller's input there, which is gone by the next call: it cannot resume,
 * and the next finish says so.
 */
int gf_cu_finish(void *inst, float *outp, uint64_t deadline_ns)
{
	struct gf_cu_inst *in = (struct gf_cu_inst *)inst;
	uint32_t frames = in->sub_frames;
	if (!frames)
		return GF_E_INVAL;
	if (in->sub_kind == GF_CU_SUB_LOST) {
		gf_errbuf_set(&in->eb, "cuda: a large call that missed its deadline cannot be resumed");
		return GF_E_CUDA;
	}
	int err = finish_call(in, outp, frames, deadline_ns);
	if (err == GF_E_TIMEOUT) { /* atomic only: this is the audio thread */
		gf_cu_doubt(in);
		if (in->sub_kind == GF_CU_SUB_PIPELINED)
			in->sub_kind = GF_CU_SUB_LOST;
		return err;
	}
	in->sub_frames = 0;
	if (!err && !__atomic_load_n(&in->stuck_kernel, __ATOMIC_ACQUIRE))
		gf_cu_doubt_end(in); /* a late call collected: nothing of it runs now */
	return err;
}
