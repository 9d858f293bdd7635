/*
 * The persistent path's table (cu_path.cuh): start and stop the resident
 * kernel of an instance, and route a call to it. A direct instance's kernel
 * convolves all its taps; an FFT instance's its first two partitions, the
 * tail running a segment ahead beside it (cu_hybrid.cu). Whether an instance
 * builds this path at all is cu_choose.cu's (gpu_path, fit, measurement).
 */
#include "cu_direct.cuh"
#include "cu_path.cuh"
#include "cu_persist.cuh"

/* Free an FFT instance's tail. A launcher thread that did not end may still read in->fft:
 * the instance then keeps it as it keeps a stuck kernel's buffers (inst_free). */
static void drop_hybrid(struct gf_cu_inst *in)
{
	if (gf_cu_hybrid_free(in->hybrid, __atomic_load_n(&in->stuck_kernel, __ATOMIC_ACQUIRE)) != 0) {
		__atomic_store_n(&in->stuck_kernel, 1, __ATOMIC_RELEASE);
		gf_cu_doubt(in);
	}
	in->hybrid = NULL;
}

/* Start the kernel: a direct instance's taps, or an FFT instance's head with its tail (cu_hybrid.cu). */
static int persistent_create(struct gf_cu_inst *in, const struct gf_filter_set *fs, struct gf_errbuf *eb)
{
	if (in->algo == GF_ALGO_DIRECT)
		return gf_cu_persist_new(&in->persist, in, gf_cu_direct_taps(in->direct), gf_cu_direct_taps_pad(in->direct),
				      NULL, eb);
	int err = gf_cu_hybrid_new(&in->hybrid, in, fs, eb);
	if (!err) {
		struct gf_cu_persist_rings rings;
		uint32_t tp = 0;
		const float *taps = gf_cu_hybrid_head_taps(in->hybrid, &tp, &rings);
		err = gf_cu_persist_new(&in->persist, in, taps, tp, &rings, eb);
	}
	if (err)
		drop_hybrid(in);
	return err;
}

/* A kernel that has not handed over takes every call (its instance's calls fit it: max_block). */
static int persistent_fits(const struct gf_cu_inst *in, uint32_t)
{
	return gf_cu_pk_active(in);
}

/* Claim the kernel for the call; one handed over since fits() passes the call on. */
static int persistent_submit(struct gf_cu_inst *in, const float *inp, uint32_t frames)
{
	int pk = gf_cu_pk_take(in);
	if (pk < 0)
		return GF_E_BUSY;
	if (pk == 0)
		return GF_CU_PATH_DECLINED;
	return in->hybrid ? gf_cu_hybrid_submit(in->hybrid, in, inp, frames)
			  : gf_cu_persist_submit(in->persist, inp, frames);
}

static int persistent_finish(struct gf_cu_inst *in, float *outp, uint32_t frames, uint64_t deadline_ns)
{
	int err = in->hybrid ? gf_cu_hybrid_finish(in->hybrid, in, outp, frames, deadline_ns)
			     : gf_cu_persist_finish(in->persist, outp, frames, deadline_ns, &in->eb);
	return gf_cu_pk_end_call(in, err, deadline_ns);
}

/* The engine gave the instance up: its kernel asked to stop (again each time until it has), and
 * an FFT tail's side stream and launcher idle. */
static int persistent_stop(struct gf_cu_inst *in, uint64_t deadline_ns)
{
	if (in->persist && !gf_cu_pk_stop_given_up(in, deadline_ns))
		return 0;
	return !in->hybrid || gf_cu_hybrid_idle(in->hybrid);
}

/* Stop the instance's persistent kernel: the launched path runs. A kernel that does not stop
 * leaves the instance stuck (inst_free then keeps what it may write). */
static void persistent_free(struct gf_cu_inst *in)
{
	if (gf_cu_persist_free(in->persist) != 0) { /* set, never cleared: a stuck kernel stays stuck */
		__atomic_store_n(&in->stuck_kernel, 1, __ATOMIC_RELEASE);
		gf_cu_doubt(in);
	}
	in->persist = NULL;
	drop_hybrid(in);
}

const struct gf_cu_path gf_cu_path_persistent = {
	"persistent",	 persistent_create, persistent_fits, persistent_submit, persistent_finish,
	persistent_stop, persistent_free,   1,
};
