/*
 * The bare PCIe round trip a live block cannot beat (benchmarks only): one
 * block's input up, the smallest kernel, the output back, and the host sees
 * it. Three shapes: pinned staging with two copies and a stream synchronize;
 * host-mapped memory read and written by the kernel, with a synchronize; and
 * host-mapped memory with a completion word the kernel writes and the host
 * polls (no driver call in the wait), the shape of the backend's live path.
 *
 * Built only into the benchmarks that compare against it (bench_gpu,
 * bench_live). It uses cuda/'s error checks and the event pair of its split
 * hooks (gf_cu_split_arm, gf_cu_split_read), from the objects they link.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cu_common.cuh"
#include "cuda_floor.h"

struct gf_cuda_floor {
	int shape;
	size_t bytes;
	cudaStream_t s;
	float *h_in, *h_out, *d_in, *d_out;
	volatile unsigned *h_flag;
	unsigned seq;
	cudaEvent_t ev[2]; /**< gf_cuda_floor_split: around each trip's work */
	uint64_t enqueue_ns;
};

__global__ void k_floor_empty(void)
{
}

/* out = in (mapped), then the completion word. */
__global__ void k_floor_touch(const float *__restrict__ in, float *__restrict__ out, unsigned n,
			      unsigned *flag, unsigned seq)
{
	for (unsigned i = threadIdx.x; i < n; i += blockDim.x)
		out[i] = in[i];
	if (flag) {
		__threadfence_system();
		__syncthreads();
		if (threadIdx.x == 0)
			*(volatile unsigned *)flag = seq;
	}
}

extern "C" int gf_cuda_floor_new(struct gf_cuda_floor **out, int dev, uint32_t samples, int shape)
{
	struct gf_errbuf eb = {{0}};
	struct gf_cuda_floor *f = (struct gf_cuda_floor *)calloc(1, sizeof(*f));
	int lo = 0, hi = 0, err;
	if (!f)
		return GF_E_NOMEM;
	f->shape = shape;
	f->bytes = (size_t)samples * sizeof(float);
	unsigned hflags = shape == GF_CUDA_FLOOR_COPY ? cudaHostAllocDefault : cudaHostAllocMapped;
	if ((err = CU_TRY(&eb, cudaSetDevice(dev))) ||
	    (err = CU_TRY(&eb, cudaDeviceGetStreamPriorityRange(&lo, &hi))) ||
	    (err = CU_TRY(&eb, cudaStreamCreateWithPriority(&f->s, cudaStreamNonBlocking, hi))) ||
	    (err = CU_TRY(&eb, cudaHostAlloc(&f->h_in, f->bytes, hflags))) ||
	    (err = CU_TRY(&eb, cudaHostAlloc(&f->h_out, f->bytes, hflags))) ||
	    (err = CU_TRY(&eb, cudaHostAlloc((void **)&f->h_flag, sizeof(unsigned), cudaHostAllocMapped))))
		goto fail;
	if (shape == GF_CUDA_FLOOR_COPY && ((err = CU_TRY(&eb, cudaMalloc(&f->d_in, f->bytes))) ||
					    (err = CU_TRY(&eb, cudaMalloc(&f->d_out, f->bytes)))))
		goto fail;
	memset(f->h_in, 0, f->bytes);
	*f->h_flag = 0;
	*out = f;
	return 0;
fail:
	gf_cuda_floor_free(f);
	return err;
}

/* After a trip's work is enqueued: the second event and the host's time, when split. */
static cudaError_t floor_mark(struct gf_cuda_floor *f, uint64_t t0)
{
	if (!t0)
		return cudaGetLastError();
	cudaError_t e = cudaEventRecord(f->ev[1], f->s);
	f->enqueue_ns = gf_now_ns() - t0;
	return e;
}

extern "C" int gf_cuda_floor_trip(struct gf_cuda_floor *f, const float *in, float *out)
{
	struct gf_errbuf eb = {{0}};
	unsigned n = (unsigned)(f->bytes / sizeof(float));
	uint64_t t0 = f->ev[0] ? gf_now_ns() : 0;
	memcpy(f->h_in, in, f->bytes);
	if (t0)
		CU_RET(&eb, cudaEventRecord(f->ev[0], f->s));
	if (f->shape == GF_CUDA_FLOOR_COPY) {
		CU_RET(&eb, cudaMemcpyAsync(f->d_in, f->h_in, f->bytes, cudaMemcpyHostToDevice, f->s));
		k_floor_empty<<<1, 32, 0, f->s>>>();
		CU_RET(&eb, cudaMemcpyAsync(f->h_out, f->d_out, f->bytes, cudaMemcpyDeviceToHost, f->s));
		CU_RET(&eb, floor_mark(f, t0));
		CU_RET(&eb, cudaStreamSynchronize(f->s));
	} else if (f->shape == GF_CUDA_FLOOR_MAPPED) {
		k_floor_touch<<<1, 128, 0, f->s>>>(f->h_in, f->h_out, n, NULL, 0);
		CU_RET(&eb, floor_mark(f, t0));
		CU_RET(&eb, cudaStreamSynchronize(f->s));
	} else {
		unsigned seq = ++f->seq;
		k_floor_touch<<<1, 128, 0, f->s>>>(f->h_in, f->h_out, n, (unsigned *)f->h_flag, seq);
		CU_RET(&eb, floor_mark(f, t0));
		while (*f->h_flag != seq)
			;
	}
	memcpy(out, f->h_out, f->bytes);
	return 0;
}


extern "C" int gf_cuda_floor_split(struct gf_cuda_floor *f)
{
	return gf_cu_split_arm(f->ev);
}

extern "C" int gf_cuda_floor_last_split(struct gf_cuda_floor *f, double *enqueue_us, double *gpu_us)
{
	return gf_cu_split_read(f->ev, f->enqueue_ns, enqueue_us, gpu_us);
}

extern "C" void gf_cuda_floor_free(struct gf_cuda_floor *f)
{
	if (!f)
		return;
	for (int i = 0; i < 2; i++)
		if (f->ev[i])
			cudaEventDestroy(f->ev[i]);
	if (f->s) {
		cudaStreamSynchronize(f->s);
		cudaStreamDestroy(f->s);
	}
	cudaFreeHost(f->h_in);
	cudaFreeHost(f->h_out);
	cudaFreeHost((void *)f->h_flag);
	cudaFree(f->d_in);
	cudaFree(f->d_out);
	(void)cudaGetLastError();
	free(f);
}
