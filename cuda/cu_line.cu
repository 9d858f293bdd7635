/* Per-channel input line shared by both algorithms: deinterleave new frames
 * behind the history, and move the history to the front when the line fills. */
#include "cu_common.cuh"

int gf_cu_line_init(struct gf_cu_line *l, uint32_t channels, int64_t keep, uint32_t chunk, cudaStream_t s,
		    struct gf_errbuf *eb)
{
	l->keep = keep;
	l->cap = 2 * keep + chunk;
	l->cap = (l->cap + 31) & ~(int64_t)31;
	return gf_cu_dmalloc((void **)&l->d_line, (size_t)l->cap * channels * sizeof(float), s, eb);
}

void gf_cu_line_free(struct gf_cu_line *l, cudaStream_t s)
{
	gf_cu_dfree(l->d_line, s);
	l->d_line = NULL;
}

int gf_cu_line_reset(struct gf_cu_line *l, uint32_t channels, cudaStream_t s, struct gf_errbuf *eb)
{
	CU_RET(eb, cudaMemsetAsync(l->d_line, 0, (size_t)l->cap * channels * sizeof(float), s));
	l->pos = 0;
	l->origin = -l->keep;
	return 0;
}

/* Deinterleave in[n*C + c] into line[c*cap + j0 + n] for n >= skip; clear
 * out[] alongside. 32-bit indices: a chunk holds well under 2^31 samples. */
__global__ void k_line_append(float *__restrict__ line, int64_t cap, int64_t j0, const float *__restrict__ in,
			      uint32_t frames, uint32_t skip, uint32_t C, float *__restrict__ zero_out)
{
	const uint32_t total = frames * C, first = skip * C;
	for (uint32_t i = first + blockIdx.x * blockDim.x + threadIdx.x; i < total;
	     i += gridDim.x * blockDim.x) {
		uint32_t n = i / C, c = i - n * C;
		line[c * cap + j0 + n] = in[i];
	}
	if (zero_out)
		for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total;
		     i += gridDim.x * blockDim.x)
			zero_out[i] = 0.0f;
}

/* line[c*cap + i] = line[c*cap + src + i] for i < keep; src >= keep, so no overlap. */
__global__ void k_line_move(float *__restrict__ line, int64_t cap, int64_t src, int64_t keep, uint32_t C)
{
	uint64_t total = (uint64_t)keep * C;
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < total;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		uint64_t c = i / keep, k = i % keep;
		line[c * cap + k] = line[c * cap + src + k];
	}
}

static unsigned grid_for(uint64_t n, unsigned block)
{
	uint64_t g = (n + block - 1) / block;
	return (unsigned)(g < 1 ? 1 : g > 65535 ? 65535 : g);
}

int gf_cu_line_append(struct gf_cu_line *l, uint32_t channels, const float *d_in, uint32_t frames,
		      int tail_only, float *d_zero_out, cudaStream_t s, struct gf_errbuf *eb, int64_t *j0)
{
	int64_t jw = l->pos - l->origin;
	if (jw + frames > l->cap) {
		if (l->keep > 0) {
			k_line_move<<<grid_for((uint64_t)l->keep * channels, 256), 256, 0, s>>>(
				l->d_line, l->cap, jw - l->keep, l->keep, channels);
			CU_LAUNCHED(eb);
		}
		l->origin = l->pos - l->keep;
		jw = l->keep;
	}
	uint32_t skip = tail_only && frames > l->keep ? frames - (uint32_t)l->keep : 0;
	uint64_t work = (uint64_t)(d_zero_out ? frames : frames - skip) * channels;
	k_line_append<<<grid_for(work, 256), 256, 0, s>>>(l->d_line, l->cap, jw, d_in, frames, skip, channels,
							  d_zero_out);
	CU_LAUNCHED(eb);
	*j0 = jw;
	return 0;
}

/* line[c*cap + keep - m + i] = hist[(n - m + i)*C + c] for the newest m = min(n, keep) frames. */
__global__ void k_line_load(float *__restrict__ line, int64_t cap, int64_t keep, const float *__restrict__ hist,
			    uint32_t n, uint32_t m, uint32_t C)
{
	const uint64_t total = (uint64_t)m * C;
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < total;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		uint64_t f = i / C, c = i - f * C;
		line[c * cap + keep - m + f] = hist[(uint64_t)(n - m + f) * C + c];
	}
}

int gf_cu_line_load(struct gf_cu_line *l, uint32_t channels, const float *d_hist, uint32_t n, cudaStream_t s,
		    struct gf_errbuf *eb)
{
	return gf_cu_line_load_at(l, channels, d_hist, n, n, s, eb);
}

int gf_cu_line_load_at(struct gf_cu_line *l, uint32_t channels, const float *d_hist, uint32_t n, int64_t end,
		       cudaStream_t s, struct gf_errbuf *eb)
{
	uint32_t m = (int64_t)n < l->keep ? n : (uint32_t)l->keep;
	if (m > 0) {
		k_line_load<<<grid_for((uint64_t)m * channels, 256), 256, 0, s>>>(l->d_line, l->cap, l->keep, d_hist,
										   n, m, channels);
		CU_LAUNCHED(eb);
	}
	l->pos = end;
	l->origin = end - l->keep; /* pos at line index keep, as after a move */
	return 0;
}

void gf_cu_line_preload(void)
{
	cudaFuncAttributes a;
	(void)cudaFuncGetAttributes(&a, k_line_append);
	(void)cudaFuncGetAttributes(&a, k_line_move);
	(void)cudaFuncGetAttributes(&a, k_line_load);
	(void)cudaGetLastError();
}
