/*
 * A call's submit and finish (backend.h; the audio thread): the test hooks,
 * then the path the call takes (cu_path.cuh: the first in gf_cu_paths that
 * fits), and one chunk's work that every launched path enqueues.
 * finish polls an event or completion words until the block's deadline,
 * never a blocking synchronize: a hung kernel must not hang the audio thread.
 * A call past its deadline stays in flight and a later finish collects it;
 * every path but the pipeline copies its input at submit, so it can.
 */
#include <sched.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "cu_fft.cuh"
#include "cu_direct.cuh"
#include "cu_path.cuh"
#include "cu_persist.cuh"

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

/* Which path a call takes: the first in gf_cu_paths that fits (cu_choose.cu); one that steps
 * aside at submit (a persistent kernel handed over meanwhile) passes the call to the next. */
static int submit_call(struct gf_cu_inst *in, const float *inp, uint32_t frames)
{
	for (const struct gf_cu_path *const *p = gf_cu_paths; *p; p++) {
		if (!(*p)->fits(in, frames))
			continue;
		in->sub_path = *p;
		int err = (*p)->submit(in, inp, frames);
		if (err != GF_CU_PATH_DECLINED)
			return err;
	}
	return GF_E_INVAL; /* not reached: the last path takes any call */
}

static int finish_call(struct gf_cu_inst *in, float *outp, uint32_t frames, uint64_t deadline_ns)
{
	return in->sub_path->finish(in, outp, frames, deadline_ns);
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
	in->sub_lost = 0;
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
	if (in->sub_lost) {
		gf_errbuf_set(&in->eb, "cuda: a large call that missed its deadline cannot be resumed");
		return GF_E_CUDA;
	}
	int err = finish_call(in, outp, frames, deadline_ns);
	if (err == GF_E_TIMEOUT) { /* atomic only: this is the audio thread */
		gf_cu_doubt(in);
		in->sub_lost = !in->sub_path->resumable;
		return err;
	}
	in->sub_frames = 0;
	if (!err && !__atomic_load_n(&in->stuck_kernel, __ATOMIC_ACQUIRE))
		gf_cu_doubt_end(in); /* a late call collected: nothing of it runs now */
	return err;
}
