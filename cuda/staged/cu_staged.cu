/*
 * The launched paths of calls that fit one staging chunk (every live block
 * on them): "mapped" for the FFT algorithm's small calls, whose kernels read
 * the input from and write the output to host-mapped memory (no copies), the
 * last kernel writing completion words that finish polls; and "staged" for
 * the rest, one copy each way through the instance's pinned staging on
 * s_comp, finish polling an event. Both copy the input at submit, so a call
 * past its deadline is collected by a later finish.
 */
#include <stdlib.h>
#include <string.h>

#include "cu_fft.cuh"
#include "cu_path.cuh"
#include "cu_staged.cuh"

/* The mapped path's state: input and output in host-mapped memory (chunk x channels floats) and the
 * completion words the FFT's last kernel writes there. */
struct gf_cu_mapped {
	float *h_in, *h_out;
	unsigned *h_done;
	unsigned seq;	/**< the sequence number the last call's kernel writes */
	unsigned words; /**< completion words of the call in flight */
};

static void mapped_free(struct gf_cu_inst *in)
{
	struct gf_cu_mapped *m = in->mapped;
	if (!m)
		return;
	gf_cu_hfree(m->h_in);
	gf_cu_hfree(m->h_out);
	gf_cu_hfree(m->h_done);
	free(m);
	in->mapped = NULL;
}

/* Where the chunk is small enough: host-mapped staging beside the pinned one (an instance whose
 * algorithm calibration may still make FFT has it either way). */
static int mapped_create(struct gf_cu_inst *in, const struct gf_filter_set *, struct gf_errbuf *eb)
{
	if (!gf_cu_small_call(in, in->chunk) || (size_t)in->chunk * in->channels > GF_CU_MAPPED_SAMPLES)
		return 0;
	struct gf_cu_mapped *m = (struct gf_cu_mapped *)calloc(1, sizeof(*m));
	if (!m) {
		gf_errbuf_set(eb, "cuda: out of host memory");
		return GF_E_NOMEM;
	}
	in->mapped = m; /* freed with the instance, also half-built */
	size_t bytes = (size_t)in->chunk * in->channels * sizeof(float);
	size_t words = (size_t)(in->chunk * in->channels + 255) / 256 * sizeof(unsigned);
	GF_RET(gf_cu_halloc((void **)&m->h_in, bytes, cudaHostAllocMapped, eb));
	GF_RET(gf_cu_halloc((void **)&m->h_out, bytes, cudaHostAllocMapped, eb));
	GF_RET(gf_cu_halloc((void **)&m->h_done, words, cudaHostAllocMapped, eb));
	memset(m->h_in, 0, bytes);
	memset(m->h_done, 0, words);
	return 0;
}

static int mapped_fits(const struct gf_cu_inst *in, uint32_t frames)
{
	return gf_cu_small_call(in, frames) && in->mapped && in->algo == GF_ALGO_FFT;
}

static int mapped_submit(struct gf_cu_inst *in, const float *inp, uint32_t frames)
{
	struct gf_cu_mapped *m = in->mapped;
	memcpy(m->h_in, inp, (size_t)frames * in->channels * sizeof(float));
	unsigned seq = ++m->seq;
	m->words = gf_cu_fft_set_done(in->fft, m->h_done, seq, frames);
	int err = gf_cu_run_chunk(in, m->h_in, m->h_out, frames, in->s_comp, &in->eb);
	if (err)
		gf_cu_fft_set_done(in->fft, NULL, 0, 0);
	return err;
}

static int mapped_finish(struct gf_cu_inst *in, float *outp, uint32_t frames, uint64_t deadline_ns)
{
	struct gf_cu_mapped *m = in->mapped;
	int err = gf_cu_wait_words(m->h_done, m->words, m->seq, in->s_comp, deadline_ns, &in->eb);
	if (!err)
		memcpy(outp, m->h_out, (size_t)frames * in->channels * sizeof(float));
	return err;
}

const struct gf_cu_path gf_cu_path_mapped = {
	"mapped", mapped_create, mapped_fits, mapped_submit, mapped_finish, NULL, mapped_free, 1,
};

/* Other small calls: one staging copy each way (cheaper than asking the driver whether the
 * caller's memory is pinned). */
static int staged_fits(const struct gf_cu_inst *in, uint32_t frames)
{
	return gf_cu_small_call(in, frames);
}

/* One chunk on s_comp alone: the low-latency path of every live block. Enqueues
 * upload, kernels and download; finish waits for ev_done. */
static int staged_submit(struct gf_cu_inst *in, const float *inp, uint32_t frames)
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

static int staged_finish(struct gf_cu_inst *in, float *outp, uint32_t frames, uint64_t deadline_ns)
{
	int err = gf_cu_wait_event(in, in->ev_done, deadline_ns);
	if (!err)
		memcpy(outp, in->h_out[0], (size_t)frames * in->channels * sizeof(float));
	return err;
}

const struct gf_cu_path gf_cu_path_staged = {
	"staged", NULL, staged_fits, staged_submit, staged_finish, NULL, NULL, 1,
};
