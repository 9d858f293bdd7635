/*
 * Zero-latency overlap-save with cuFFT (R2C/C2R, batched over segments and
 * channels), in one of two shapes:
 *
 *  - uniformly partitioned (UPOLS): hop B = partition P, FFT size N = 2P,
 *    M = ceil(taps/P) partitions with spectra H_j;
 *  - long hop (M = 1, for calls much longer than the filter): the whole filter
 *    is one partition, the window keeps Hh >= taps-1 frames of history and
 *    advances by B = 2, 4 or 8 times Hh, so N = B + Hh = 3, 5 or 9 times Hh
 *    and each frame is transformed N/B = 1.5 .. 1.125 times instead of 2.
 *
 * Segment s is input frames [sB, sB+B); its window is frames [sB-Hh, sB+B)
 * (Hh = N - B) and X_s its spectrum, kept in a ring (the frequency-domain
 * delay line). Output frame sB+m is sample Hh+m of IFFT(sum_j H_j X_{s-j}).
 * Partitions j >= 1 only read completed segments, so their sum T_s is computed
 * once and cached while segment s fills up over several calls; each call then
 * only transforms the partly filled window (the head partition j = 0), adds
 * T_s and transforms back. A call that spans many segments (offline) does all
 * of them in one batch. B is a power of two in both shapes.
 *
 * This file holds the state's life: buffers, plans, the filter's spectra,
 * reset and free. The shape is chosen in cu_fft_shape.cu; a call, the
 * prime and the tails summed ahead run in cu_fft_run.cu.
 */
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "cu_fft.cuh"

extern "C" {
#include "log.h"
}

uint32_t gf_cu_fft_partition(const struct gf_cu_fft *f)
{
	return f->B;
}

uint32_t gf_cu_fft_size(const struct gf_cu_fft *f)
{
	return f->N;
}

/* Filter partitions j0..j0+cnt-1 (L taps each) into W, zero padded to N, scaled by 1/N. */
__global__ void k_pad_taps(float *__restrict__ W, const float *__restrict__ h, uint32_t taps, uint32_t j0,
			   uint32_t cnt, uint32_t L, uint32_t N, uint32_t C)
{
	uint64_t total = (uint64_t)cnt * C * N;
	float scale = 1.0f / (float)N;
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < total;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		uint64_t b = i / N;
		uint32_t k = (uint32_t)(i % N), c = (uint32_t)(b % C), j = j0 + (uint32_t)(b / C);
		uint64_t tap = (uint64_t)j * L + k;
		W[i] = (k < L && tap < taps) ? h[(uint64_t)c * taps + tap] * scale : 0.0f;
	}
}

/* Plans from the process-wide cache (cu_pool.cu), one work area for all of
 * them from the stream-ordered pool. *made_new: a plan was built here. */
static int make_plans(struct gf_cu_fft *f, int dev, cudaStream_t s, int *made_new, struct gf_errbuf *eb)
{
	size_t ws_max = 0, ws = 0;
	int mn = 0;
	*made_new = 0;
	for (int i = 0; i < GF_CU_FFT_MAX_PLANS && (1u << i) <= f->gmax; i++) {
		long long batch = (long long)(1u << i) * f->C;
		GF_RET(gf_cu_plan_get(&f->r2c[i], &ws, dev, f->N, batch, CUFFT_R2C, &mn, eb));
		f->made_r2c = i + 1;
		*made_new |= mn;
		ws_max = ws > ws_max ? ws : ws_max;
		GF_RET(gf_cu_plan_get(&f->c2r[i], &ws, dev, f->N, batch, CUFFT_C2R, &mn, eb));
		f->made_c2r = i + 1;
		*made_new |= mn;
		ws_max = ws > ws_max ? ws : ws_max;
		f->nplans = i + 1;
	}
	GF_RET(gf_cu_plan_get(&f->r2c_prime, &ws, dev, f->N, (long long)f->gp * f->C, CUFFT_R2C, &mn, eb));
	f->made_prime = 1;
	*made_new |= mn;
	ws_max = ws > ws_max ? ws : ws_max;
	f->ws = ws_max;
	if (ws_max)
		GF_RET(gf_cu_dmalloc(&f->d_work, ws_max, s, eb));
	for (int i = 0; i < f->nplans; i++) {
		CUFFT_RET(eb, cufftSetWorkArea(f->r2c[i], f->d_work));
		CUFFT_RET(eb, cufftSetWorkArea(f->c2r[i], f->d_work));
		CUFFT_RET(eb, cufftSetStream(f->r2c[i], s));
		CUFFT_RET(eb, cufftSetStream(f->c2r[i], s));
	}
	CUFFT_RET(eb, cufftSetWorkArea(f->r2c_prime, f->d_work));
	CUFFT_RET(eb, cufftSetStream(f->r2c_prime, s));
	return 0;
}

static int make_spectra(struct gf_cu_fft *f, const struct gf_filter_set *fs, cudaStream_t s,
			struct gf_errbuf *eb)
{
	float *d_h = NULL;
	size_t n = (size_t)fs->channels * fs->taps;
	int err = gf_cu_dmalloc((void **)&d_h, n * sizeof(float), s, eb);
	if (!err)
		err = CU_TRY(eb,
			     cudaMemcpyAsync(d_h, fs->coeffs, n * sizeof(float), cudaMemcpyHostToDevice, s));
	for (uint32_t j = 0; !err && j < f->M;) {
		int pi = plan_for(f, f->M - j);
		uint32_t cnt = 1u << pi;
		k_pad_taps<<<blocks_for((uint64_t)cnt * f->C * f->N, 256), 256, 0, s>>>(
			f->d_W, d_h, fs->taps, j, cnt, f->L, f->N, f->C);
		err = CU_TRY(eb, cudaGetLastError());
		if (!err)
			err = CUFFT_TRY(eb,
					cufftExecR2C(f->r2c[pi], f->d_W, f->d_H + (size_t)j * f->C * f->NB));
		j += cnt;
	}
	if (!err) /* fs->coeffs is the caller's: the copy must be done before create returns */
		err = CU_TRY(eb, cudaStreamSynchronize(s));
	gf_cu_dfree(d_h, s);
	return err;
}

int gf_cu_fft_new(struct gf_cu_fft **out, struct gf_cu_inst *in, const struct gf_filter_set *fs,
		  const struct gf_cu_fft_shape *shape, struct gf_errbuf *eb)
{
	int err;
	struct gf_cu_fft *f = (struct gf_cu_fft *)calloc(1, sizeof(*f));
	if (!f) {
		gf_errbuf_set(eb, "cuda fft: out of host memory");
		return GF_E_NOMEM;
	}
	f->B = shape->B;
	f->Hh = shape->Hh;
	f->N = shape->N;
	f->NB = shape->N / 2 + 1;
	f->C = fs->channels;
	f->M = shape->M;
	f->L = f->M == 1 ? f->N : f->B; /* one partition: the whole filter */
	while ((1u << f->lb) < f->B)
		f->lb++;
	f->gmax = (in->chunk + f->B - 1) / f->B + 1;
	f->Mr = f->M + f->gmax;
	f->tf_seg = -1;
	f->a_seg = -1;
	f->a_ready = -1;
	f->s = in->s_comp;
	{ /* prime passes: a power of two of segments, windows of at most 2^24 floats */
		uint64_t cap = ((uint64_t)1 << 24) / ((uint64_t)f->C * f->N);
		uint64_t want = f->M < cap ? f->M : cap;
		f->gp = 1;
		while ((uint64_t)f->gp * 2 <= want)
			f->gp *= 2;
	}
	size_t spec = (size_t)f->C * f->NB * sizeof(cufftComplex), win = (size_t)f->C * f->N * sizeof(float);
	cudaStream_t s = in->s_comp;
	int made_new = 0;
	double t[4];
	t[0] = (1e3 * gf_now_s());
	if ((err = gf_cu_dmalloc((void **)&f->d_H, spec * f->M, s, eb)) ||
	    (err = gf_cu_dmalloc((void **)&f->d_X, spec * f->Mr, s, eb)) ||
	    (err = gf_cu_dmalloc((void **)&f->d_T, 2 * spec, s, eb)) ||
	    (gf_cu_fft_sums_ahead(f->M, in->max_block) && (err = gf_cu_dmalloc((void **)&f->d_A, 3 * spec, s, eb))) ||
	    (err = gf_cu_dmalloc((void **)&f->d_Y, spec * f->gmax, s, eb)) ||
	    (err = gf_cu_dmalloc((void **)&f->d_W, win * f->gmax, s, eb)) ||
	    (err = gf_cu_dmalloc((void **)&f->d_y, win * f->gmax, s, eb)))
		goto fail;
	t[1] = (1e3 * gf_now_s());
	if ((err = make_plans(f, in->dev, s, &made_new, eb)))
		goto fail;
	t[2] = (1e3 * gf_now_s());
	/* A new plan's set-up may have queued work on the legacy stream, which our
	 * non-blocking streams do not wait for: wait for that stream alone (it does
	 * not wait for other instances' non-blocking streams). */
	if ((made_new && (err = CU_TRY(eb, cudaStreamSynchronize(cudaStreamLegacy)))) ||
	    (err = make_spectra(f, fs, s, eb)) || (err = gf_cu_fft_reset(f, in, s, eb)))
		goto fail;
	t[3] = (1e3 * gf_now_s());
	gf_debug("cuda fft: set-up ms: buffers %.1f, %d plans %.1f (%s), spectra %.1f", t[1] - t[0],
		 2 * f->nplans + 1, t[2] - t[1], made_new ? "some new" : "all cached", t[3] - t[2]);
	*out = f;
	return 0;
fail:
	gf_cu_fft_free(f);
	return err;
}

void gf_cu_fft_free(struct gf_cu_fft *f)
{
	if (!f)
		return;
	/* The caller has synchronized the stream: the plans are idle. */
	for (int i = 0; i < f->made_r2c; i++)
		gf_cu_plan_put(f->r2c[i]);
	for (int i = 0; i < f->made_c2r; i++)
		gf_cu_plan_put(f->c2r[i]);
	if (f->made_prime)
		gf_cu_plan_put(f->r2c_prime);
	gf_cu_dfree(f->d_work, f->s);
	gf_cu_dfree(f->d_H, f->s);
	gf_cu_dfree(f->d_X, f->s);
	gf_cu_dfree(f->d_T, f->s);
	gf_cu_dfree(f->d_A, f->s);
	gf_cu_dfree(f->d_Y, f->s);
	gf_cu_dfree(f->d_W, f->s);
	gf_cu_dfree(f->d_y, f->s);
	free(f);
}

int gf_cu_fft_reset(struct gf_cu_fft *f, struct gf_cu_inst *in, cudaStream_t s, struct gf_errbuf *eb)
{
	(void)in;
	CU_RET(eb, cudaMemsetAsync(f->d_X, 0, (size_t)f->Mr * f->C * f->NB * sizeof(cufftComplex), s));
	f->tf_seg = -1;
	f->a_seg = -1;
	f->a_ready = -1;
	if (f->d_A) { /* silence: the tail of segment 0 is zero, summed ahead already */
		CU_RET(eb, cudaMemsetAsync(f->d_A, 0, 3 * (size_t)f->C * f->NB * sizeof(cufftComplex), s));
		f->a_ready = 0;
	}
	return 0;
}

int gf_cu_fft_sums_ahead(uint32_t M, uint32_t max_block)
{
	return M > 2 && max_block < GF_CU_FFT_LIVE_BLOCK;
}
