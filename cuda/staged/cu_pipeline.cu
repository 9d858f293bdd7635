/*
 * Large calls: the copy/compute pipeline over three streams. A call is cut
 * into chunks of inst->chunk frames. Chunk k is copied host->device on s_h2d,
 * convolved on s_comp and copied back on s_d2h, with events so that the
 * upload of chunk k+1 and the download of chunk k-1 overlap the compute of
 * chunk k (two staging slots). When the caller's memory is page-locked
 * (gf_cuda_pin), the copies DMA straight from and to it. Runs in finish, so
 * its waits share the call's deadline.
 */
#include <string.h>

#include "cu_path.cuh"
#include "cu_staged.cuh"

/* Enqueue chunk k (slot k&1) on the three streams. With @p direct_io the
 * caller's memory is pinned: DMA straight from and to it, no staging copies. */
static int enqueue_chunk(struct gf_cu_inst *in, const float *inp, float *outp, uint32_t k, uint32_t f,
			 bool direct_io, uint64_t deadline_ns)
{
	struct gf_errbuf *eb = &in->eb;
	int s = k & 1;
	size_t bytes = (size_t)f * in->channels * sizeof(float);
	const float *src = inp;
	if (!direct_io) {
		int err = k >= 2 ? gf_cu_wait_event(in, in->ev_h2d[s], deadline_ns) : 0;
		if (err) /* upload of chunk k-2 not done: its pinned slot is not free */
			return err;
		memcpy(in->h_in[s], inp, bytes);
		src = in->h_in[s];
	}
	if (k >= 2) /* compute of chunk k-2 has finished reading d_in[s] */
		CU_RET(eb, cudaStreamWaitEvent(in->s_h2d, in->ev_comp[s], 0));
	CU_RET(eb, cudaMemcpyAsync(in->d_in[s], src, bytes, cudaMemcpyHostToDevice, in->s_h2d));
	CU_RET(eb, cudaEventRecord(in->ev_h2d[s], in->s_h2d));
	CU_RET(eb, cudaStreamWaitEvent(in->s_comp, in->ev_h2d[s], 0));
	if (k >= 2) /* download of chunk k-2 has emptied d_out[s] */
		CU_RET(eb, cudaStreamWaitEvent(in->s_comp, in->ev_d2h[s], 0));
	int err = gf_cu_run_chunk(in, in->d_in[s], in->d_out[s], f, in->s_comp, eb);
	if (err)
		return err;
	CU_RET(eb, cudaEventRecord(in->ev_comp[s], in->s_comp));
	CU_RET(eb, cudaStreamWaitEvent(in->s_d2h, in->ev_comp[s], 0));
	CU_RET(eb, cudaMemcpyAsync(direct_io ? outp : in->h_out[s], in->d_out[s], bytes,
				   cudaMemcpyDeviceToHost, in->s_d2h));
	CU_RET(eb, cudaEventRecord(in->ev_d2h[s], in->s_d2h));
	return 0;
}

static int finish_chunk(struct gf_cu_inst *in, float *outp, uint32_t k, uint32_t f, bool direct_io,
			uint64_t deadline_ns)
{
	int s = k & 1;
	int err = gf_cu_wait_event(in, in->ev_d2h[s], deadline_ns);
	if (err)
		return err;
	if (!direct_io)
		memcpy(outp, in->h_out[s], (size_t)f * in->channels * sizeof(float));
	return 0;
}

/*
 * After a failed chunk: let nothing still read the staging buffers when the
 * call returns. The three streams are joined into s_comp and waited for until
 * the call's deadline (this is the audio thread: never a synchronize, which
 * waits for good behind a hung kernel); what is still in flight then keeps
 * the instance in doubt, and the engine gives it up.
 */
static void drain_after_error(struct gf_cu_inst *in, uint64_t deadline_ns)
{
	(void)cudaGetLastError();
	struct gf_errbuf eb = {{0}};
	int err = CU_TRY(&eb, cudaEventRecord(in->ev_h2d[0], in->s_h2d));
	err = err ? err : CU_TRY(&eb, cudaEventRecord(in->ev_d2h[0], in->s_d2h));
	err = err ? err : CU_TRY(&eb, cudaStreamWaitEvent(in->s_comp, in->ev_h2d[0], 0));
	err = err ? err : CU_TRY(&eb, cudaStreamWaitEvent(in->s_comp, in->ev_d2h[0], 0));
	err = err ? err : CU_TRY(&eb, cudaEventRecord(in->ev_done, in->s_comp));
	err = err ? err : gf_cu_wait_event(in, in->ev_done, deadline_ns);
	if (err)
		gf_cu_doubt(in);
	(void)cudaGetLastError();
}

/* Page-locked (cudaHostAlloc or gf_cuda_pin) at both ends of the range? */
static bool is_pinned(const void *p, size_t bytes)
{
	cudaPointerAttributes a, b;
	if (cudaPointerGetAttributes(&a, p) != cudaSuccess ||
	    cudaPointerGetAttributes(&b, (const char *)p + bytes - 1) != cudaSuccess) {
		(void)cudaGetLastError();
		return false;
	}
	return a.type == cudaMemoryTypeHost && b.type == cudaMemoryTypeHost;
}

int gf_cu_process_pipelined(struct gf_cu_inst *in, const float *inp, float *outp, uint32_t frames,
			    uint64_t deadline_ns)
{
	const uint32_t ch = in->chunk, C = in->channels;
	const uint32_t nk = (frames + ch - 1) / ch;
	const size_t bytes = (size_t)frames * C * sizeof(float);
	const bool dio = is_pinned(inp, bytes) && is_pinned(outp, bytes);
	int err = 0;
	for (uint32_t k = 0; k < nk && !err; k++) {
		uint32_t f = k + 1 < nk ? ch : frames - k * ch;
		err = enqueue_chunk(in, inp + (size_t)k * ch * C, outp + (size_t)k * ch * C, k, f, dio,
				    deadline_ns);
		/* The output of k-1 is copied out only after chunk k's input was
		 * staged: in and out may alias. */
		if (!err && k >= 1)
			err = finish_chunk(in, outp + (size_t)(k - 1) * ch * C, k - 1, ch, dio, deadline_ns);
	}
	if (!err)
		err = finish_chunk(in, outp + (size_t)(nk - 1) * ch * C, nk - 1, frames - (nk - 1) * ch, dio,
				   deadline_ns);
	if (err && err != GF_E_TIMEOUT)
		drain_after_error(in, deadline_ns);
	return err;
}

/* ---- the path's table (cu_path.cuh): the last in gf_cu_paths, it takes any call ---- */

static int pipelined_fits(const struct gf_cu_inst *, uint32_t)
{
	return 1;
}

/* The work runs in finish, reading the caller's input (in->sub_in) there. */
static int pipelined_submit(struct gf_cu_inst *, const float *, uint32_t)
{
	return 0;
}

static int pipelined_finish(struct gf_cu_inst *in, float *outp, uint32_t frames, uint64_t deadline_ns)
{
	return gf_cu_process_pipelined(in, in->sub_in, outp, frames, deadline_ns);
}

/* Not resumable: a later finish no longer has the caller's input. */
const struct gf_cu_path gf_cu_path_pipelined = {
	"pipelined", NULL, pipelined_fits, pipelined_submit, pipelined_finish, NULL, NULL, 0,
};
