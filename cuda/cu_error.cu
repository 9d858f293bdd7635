/* CUDA and cuFFT status codes to GF_E_CUDA plus a message naming file, line
 * and call. */
#include <stdio.h>

#include "cu_error.cuh"

int gf_cu_check(cudaError_t e, struct gf_errbuf *eb, const char *file, int line, const char *expr)
{
	if (e == cudaSuccess)
		return 0;
	(void)cudaGetLastError(); /* clear a non-sticky error so later checks start clean */
	gf_errbuf_set(eb, "%s:%d: %s: %s (%s)", file, line, expr, cudaGetErrorString(e), cudaGetErrorName(e));
	return GF_E_CUDA;
}

static const char *cufft_name(cufftResult r)
{
	switch (r) {
	case CUFFT_SUCCESS:
		return "success";
	case CUFFT_INVALID_PLAN:
		return "invalid plan";
	case CUFFT_ALLOC_FAILED:
		return "allocation failed";
	case CUFFT_INVALID_TYPE:
		return "invalid type";
	case CUFFT_INVALID_VALUE:
		return "invalid value";
	case CUFFT_INTERNAL_ERROR:
		return "internal error";
	case CUFFT_EXEC_FAILED:
		return "execution failed";
	case CUFFT_SETUP_FAILED:
		return "setup failed (driver or library)";
	case CUFFT_INVALID_SIZE:
		return "invalid size";
	case CUFFT_UNALIGNED_DATA:
		return "unaligned data";
	case CUFFT_INVALID_DEVICE:
		return "invalid device";
	case CUFFT_NO_WORKSPACE:
		return "no workspace";
	case CUFFT_NOT_IMPLEMENTED:
		return "not implemented";
	case CUFFT_NOT_SUPPORTED:
		return "not supported";
	default:
		return "unknown cuFFT error";
	}
}

int gf_cu_cufft_check(cufftResult r, struct gf_errbuf *eb, const char *file, int line, const char *expr)
{
	if (r == CUFFT_SUCCESS)
		return 0;
	gf_errbuf_set(eb, "%s:%d: %s: cuFFT error %d (%s)", file, line, expr, (int)r, cufft_name(r));
	return GF_E_CUDA;
}
