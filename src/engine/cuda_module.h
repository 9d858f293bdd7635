/**
 * @file cuda_module.h
 * The interface between the engine and the CUDA backend module
 * (libgpufir-cuda.so, built from cuda/). Plain C, no CUDA type.
 *
 * The program does not link CUDA: src/engine/cuda_loader.c dlopen()s the
 * module the first time the CUDA backend is needed (a probe, a prewarm, a
 * create), so a run on the CPU never maps libcudart or libcufft. The module
 * exports one symbol, gf_cuda_module_v1, which takes the host's services
 * (logging, error buffers: one log level for the whole process) and returns
 * its function table. A program that links cuda/'s objects itself (the GPU
 * tests and benchmarks) provides gf_cu_module, and the loader uses it
 * instead of loading the module.
 *
 * Threads: as the gf_cuda_* functions of backend.h (control thread).
 */
#ifndef GPUFIR_CUDA_MODULE_H
#define GPUFIR_CUDA_MODULE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "log.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bumped whenever either struct below, or struct gf_suppress_shape (suppress/suppress_bins.h), changes;
 * a module of another ABI is refused. */
/* 2: gf_backend_ops.check_memory; 3: unpin returns int; 4: .stop; 5: the noise suppressor (suppress_*);
 * 6: gf_filter_set's mixer fields (a mixer is refused: the host never hands the module one);
 * 7: gf_suppress_shape.highpass; 8: suppress_process answers GF_SUPPRESS_GPU_LATE (a hop late, not
 * hung: no failure); 9: suppress_process takes NaN/Inf as missing input, the state held over it;
 * 10: suppress_floor (the gain's floor per bin changes at run time: the hum's bins) */
#define GF_CUDA_MODULE_ABI 10
/** File name of the module; the loader looks for it beside the executable, then in the lib dir. */
#define GF_CUDA_MODULE_NAME "libgpufir-cuda.so"
/** Environment variable naming the module's path (tests, unusual installs). */
#define GF_CUDA_MODULE_ENV "GPUFIR_CUDA_MODULE"
/** Name of the module's entry point. */
#define GF_CUDA_MODULE_ENTRY "gf_cuda_module_v1"

struct gf_suppress_shape; /* suppress/suppress_bins.h: computed by the host's CPU suppressor */

/** What the host gives the module. */
struct gf_cuda_host {
	uint32_t abi;
	void (*vlog)(enum gf_log_level level, const char *fmt, va_list ap);
	void (*errbuf_vset)(struct gf_errbuf *eb, const char *fmt, va_list ap);
};

/** What the module gives the host: the entry points of backend.h, same contracts. */
struct gf_cuda_module {
	uint32_t abi;
	const struct gf_backend_ops *ops;
	int (*probe)(int gpu_index, char *desc, uint32_t desc_len);
	int (*pin)(void *ptr, size_t bytes);
	int (*unpin)(void *ptr);
	void (*prewarm)(int gpu_index);
	void (*prewarm_wait)(void);
	void (*quit_kernels)(void);
	/* The noise suppressor on the GPU (suppress/suppress_gpu.h, whose contracts these keep, on an
	 * opaque instance): the host computes the shape, the module only runs it. process() waits for
	 * each hop until @p deadline_ns (gf_now_ns() time; 0: a hung GPU's bound per hop). */
	int (*suppress_new)(const struct gf_suppress_shape *sh, uint32_t channels, int device, void **out,
			    struct gf_errbuf *eb);
	void (*suppress_free)(void *inst);
	int (*suppress_process)(void *inst, float *buf, uint32_t frames, uint64_t deadline_ns);
	int (*suppress_reset)(void *inst);
	const char *(*suppress_error)(const void *inst);
	/* The gain's floor per bin (nb floats; NULL: the shape's g_min in every bin) that every
	 * channel's bins take from the next hop on: deeper in the hum's bins (suppress/suppress_hum.h).
	 * Audio thread, as process(); RT-safe (it copies the table, which goes up with the next hop). */
	void (*suppress_floor)(void *inst, const float *g_floor);
};

/** The module's entry point. @return its table, or NULL if @p host's ABI differs. */
typedef const struct gf_cuda_module *(*gf_cuda_module_entry_fn)(const struct gf_cuda_host *host);

/** The table of cuda/'s objects, where a program links them (weak in the loader). */
extern const struct gf_cuda_module gf_cu_module;

#ifdef __cplusplus
}
#endif

#endif
