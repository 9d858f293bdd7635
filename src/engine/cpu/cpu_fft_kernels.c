/*
 * The CPU FFT convolver's inner loops (cpu_fft.c): complex multiply-adds over
 * split-form spectra and the direct head, each built twice from one body, for
 * the baseline and (x86-64) for AVX2+FMA, and chosen once per instance.
 */
#include "cpu_fft_kernels.h"

#include <stddef.h>

#include "cpu_tune.h"

typedef float v8f __attribute__((vector_size(32)));
/* Unaligned views of eight floats (plain loads and stores, also in -O0 builds). */
typedef float v8f_u __attribute__((vector_size(32), aligned(4), may_alias));
#define LD8(p) (*(const v8f_u *)(p))
#define ST8(p, v) (*(v8f_u *)(p) = (v))

#define GF_INLINE static inline __attribute__((always_inline))

/* a += b * c over n complex bins in split form (n a multiple of 8). */
GF_INLINE void cmac_body(float *restrict ar, float *restrict ai, const float *br, const float *bi,
			 const float *cr, const float *ci, uint32_t n)
{
	for (uint32_t i = 0; i < n; i += 8) {
		v8f xr = LD8(br + i), xi = LD8(bi + i), yr = LD8(cr + i), yi = LD8(ci + i);
		ST8(ar + i, LD8(ar + i) + xr * yr - xi * yi);
		ST8(ai + i, LD8(ai + i) + xr * yi + xi * yr);
	}
}

/* z = b * c (+ a when a is non-NULL), split form, n a multiple of 8. */
GF_INLINE void cmul_add_body(float *restrict zr, float *restrict zi, const float *br, const float *bi,
			     const float *cr, const float *ci, const float *ar, const float *ai, uint32_t n)
{
	for (uint32_t i = 0; i < n; i += 8) {
		v8f xr = LD8(br + i), xi = LD8(bi + i), yr = LD8(cr + i), yi = LD8(ci + i);
		v8f re = xr * yr - xi * yi, im = xr * yi + xi * yr;
		if (ar) {
			re += LD8(ar + i);
			im += LD8(ai + i);
		}
		ST8(zr + i, re);
		ST8(zi + i, im);
	}
}

/*
 * Direct head: y[i*ys] = tail[i] + sum_k hr[k] * x[i+k] for i < m (tail may be NULL).
 * x[i + lh-1] is the input frame of output i. Float sums of HEAD_RUN taps are
 * added into a second accumulator, so rounding grows with HEAD_RUN + lh/HEAD_RUN
 * rather than with lh (heads reach 65536 taps).
 */
#define HEAD_RUN 64u

GF_INLINE void head_body(const float *hr, uint32_t lh, const float *x, const float *tail, float *y,
			 uint32_t ys, uint32_t m)
{
	uint32_t i = 0;
	for (; i + 16 <= m; i += 16) {
		v8f s0 = {0}, s1 = {0};
		for (uint32_t k0 = 0; k0 < lh; k0 += HEAD_RUN) {
			uint32_t k1 = k0 + HEAD_RUN < lh ? k0 + HEAD_RUN : lh;
			v8f a0 = {0}, a1 = {0};
			for (uint32_t k = k0; k < k1; k++) {
				a0 += hr[k] * LD8(x + i + k);
				a1 += hr[k] * LD8(x + i + k + 8);
			}
			s0 += a0;
			s1 += a1;
		}
		if (tail) {
			s0 += LD8(tail + i);
			s1 += LD8(tail + i + 8);
		}
		for (int j = 0; j < 8; j++) {
			y[(size_t)(i + j) * ys] = s0[j];
			y[(size_t)(i + 8 + j) * ys] = s1[j];
		}
	}
	for (; i < m; i++) {
		float sum = tail ? tail[i] : 0.0f;
		for (uint32_t k0 = 0; k0 < lh; k0 += HEAD_RUN) {
			uint32_t k1 = k0 + HEAD_RUN < lh ? k0 + HEAD_RUN : lh;
			float acc = 0.0f;
			for (uint32_t k = k0; k < k1; k++)
				acc += hr[k] * x[i + k];
			sum += acc;
		}
		y[(size_t)i * ys] = sum;
	}
}

/* The kernels, built for the baseline and (x86-64) for AVX2+FMA. */
#define CMAC_ARGS                                                                                            \
	float *restrict ar, float *restrict ai, const float *br, const float *bi, const float *cr,           \
		const float *ci, uint32_t n
#define CMUL_ARGS                                                                                            \
	float *restrict zr, float *restrict zi, const float *br, const float *bi, const float *cr,           \
		const float *ci, const float *ar, const float *ai, uint32_t n
#define HEAD_ARGS                                                                                            \
	const float *hr, uint32_t lh, const float *x, const float *tail, float *y, uint32_t ys, uint32_t m

static void cmac_base(CMAC_ARGS)
{
	cmac_body(ar, ai, br, bi, cr, ci, n);
}
static void cmul_add_base(CMUL_ARGS)
{
	cmul_add_body(zr, zi, br, bi, cr, ci, ar, ai, n);
}
static void head_base(HEAD_ARGS)
{
	head_body(hr, lh, x, tail, y, ys, m);
}
static const struct gf_fft_kernels kernels_base = {cmac_base, cmul_add_base, head_base};

#ifdef GF_CPU_X86
GF_TARGET_AVX2 static void cmac_avx2(CMAC_ARGS)
{
	cmac_body(ar, ai, br, bi, cr, ci, n);
}
GF_TARGET_AVX2 static void cmul_add_avx2(CMUL_ARGS)
{
	cmul_add_body(zr, zi, br, bi, cr, ci, ar, ai, n);
}
GF_TARGET_AVX2 static void head_avx2(HEAD_ARGS)
{
	head_body(hr, lh, x, tail, y, ys, m);
}
static const struct gf_fft_kernels kernels_avx2 = {cmac_avx2, cmul_add_avx2, head_avx2};
#endif

const struct gf_fft_kernels *gf_cpu_fft_kernels(void)
{
#ifdef GF_CPU_X86
	if (gf_cpu_use_avx2())
		return &kernels_avx2;
#endif
	return &kernels_base;
}
