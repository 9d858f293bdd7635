/**
 * @file cu_error.cuh
 * Internal to cuda/: error checking that turns every CUDA runtime and cuFFT
 * failure into GF_E_CUDA plus a message ("file:line: call: what (name)").
 * Any thread; no allocation.
 */
#ifndef GPUFIR_CU_ERROR_CUH
#define GPUFIR_CU_ERROR_CUH

#include <cuda_runtime.h>
#include <cufft.h>

extern "C" {
#include "error.h"
}

/** Report a failed CUDA runtime call into @p eb. @return 0 or GF_E_CUDA */
int gf_cu_check(cudaError_t e, struct gf_errbuf *eb, const char *file, int line, const char *expr);
/** Same for cuFFT. */
int gf_cu_cufft_check(cufftResult r, struct gf_errbuf *eb, const char *file, int line, const char *expr);

/* Evaluate to 0 or GF_E_CUDA; the message names file, line and the call. */
#define CU_TRY(eb, call) gf_cu_check((call), (eb), __FILE__, __LINE__, #call)
#define CUFFT_TRY(eb, call) gf_cu_cufft_check((call), (eb), __FILE__, __LINE__, #call)
/* Return from the enclosing int function on failure. */
#define CU_RET(eb, call)                                                                                     \
	do {                                                                                                 \
		int gf_rc_ = CU_TRY(eb, call);                                                               \
		if (gf_rc_)                                                                                  \
			return gf_rc_;                                                                       \
	} while (0)
#define CUFFT_RET(eb, call)                                                                                  \
	do {                                                                                                 \
		int gf_rc_ = CUFFT_TRY(eb, call);                                                            \
		if (gf_rc_)                                                                                  \
			return gf_rc_;                                                                       \
	} while (0)
/* Return from the enclosing int function when @p call (0 or GF_E_*) fails. */
#define GF_RET(call)                                                                                         \
	do {                                                                                                 \
		int gf_rc_ = (call);                                                                         \
		if (gf_rc_)                                                                                  \
			return gf_rc_;                                                                       \
	} while (0)
/* After a kernel launch: configuration errors surface here. */
#define CU_LAUNCHED(eb) CU_RET(eb, cudaGetLastError())

#endif
