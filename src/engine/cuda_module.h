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

/** Bumped whenever either struct below, struct gf_suppress_shape (src/suppress/suppress_bins.h), or the dfn
 * layer's structs the neural entries take (src/dfn: dfn_model, dfn_consts, dfn_params) change; a module
 * of another ABI is refused. */
/* 2: gf_backend_ops.check_memory; 3: unpin returns int; 4: .stop; 5: the noise suppressor (suppress_*);
 * 6: gf_filter_set's mixer fields (a mixer is refused: the host never hands the module one);
 * 7: gf_suppress_shape.highpass; 8: suppress_process answers GF_SUPPRESS_GPU_LATE (a hop late, not
 * hung: no failure); 9: suppress_process takes NaN/Inf as missing input, the state held over it;
 * 10: the host's test hooks (hook_value, hook_choice); 11: gf_engine_params.gpu_path, ask_persistent;
 * 12: suppress_set_floor and gf_suppress_consts.ramp_frames (live depth and bypass);
 * 13: suppress_process takes the frame's stride (a run of channels inside a wider interleave);
 * 14: suppress_hum (the hum's factor on the gain's floor per bin changes at run time);
 * 15: neural_* (the neural stage's DeepFilterNet3 forward, cuda/dfn/) */
#define GF_CUDA_MODULE_ABI 15
/** File name of the module; the loader looks for it beside the executable, then in the lib dir. */
#define GF_CUDA_MODULE_NAME "libgpufir-cuda.so"
/** Environment variable naming the module's path (tests, unusual installs). */
#define GF_CUDA_MODULE_ENV "GPUFIR_CUDA_MODULE"
/** Name of the module's entry point. */
#define GF_CUDA_MODULE_ENTRY "gf_cuda_module_v1"

struct gf_suppress_shape; /* src/suppress/suppress_bins.h: computed by the host's CPU suppressor */
struct dfn_model;	  /* src/dfn: loaded by the host, copied to the device by neural_new */
struct dfn_consts;
struct dfn_params;

/** What the host gives the module: its log, its error buffers and its test hooks (test_hook.h), so
 * that the whole process has one log level and reads its environment in one place. */
struct gf_cuda_host {
	uint32_t abi;
	void (*vlog)(enum gf_log_level level, const char *fmt, va_list ap);
	void (*errbuf_vset)(struct gf_errbuf *eb, const char *fmt, va_list ap);
	int64_t (*hook_value)(const char *name, const char *who);
	int (*hook_choice)(const char *name, const char *const *words, int n, const char *who);
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
	void (*ask_persistent)(void);
	/* The noise suppressor on the GPU (src/suppress/suppress_gpu.h, whose contracts these keep, on an
	 * opaque instance): the host computes the shape, the module only runs it. process() waits for
	 * each hop until @p deadline_ns (gf_now_ns() time; 0: a hung GPU's bound per hop). */
	int (*suppress_new)(const struct gf_suppress_shape *sh, uint32_t channels, int device, void **out,
			    struct gf_errbuf *eb);
	void (*suppress_free)(void *inst);
	int (*suppress_process)(void *inst, float *buf, uint32_t stride, uint32_t frames,
				uint64_t deadline_ns);
	int (*suppress_reset)(void *inst);
	const char *(*suppress_error)(const void *inst);
	/* The gain's floor, ramped from the next hop (gf_suppress_gpu_set_floor): no GPU call. */
	void (*suppress_set_floor)(void *inst, float g);
	/* The hum's factor on the gain's floor per bin (nb floats, below 1 in the hum's bins; NULL: 1 in
	 * every bin) that every channel's bins take from the next hop on (src/suppress/suppress_hum.h).
	 * Audio thread, as process(); RT-safe (it copies the table, which goes up with the next hop). */
	void (*suppress_hum)(void *inst, const float *hum);
	/* The neural stage's DeepFilterNet3 forward (cuda/dfn/dfn_gpu.h, whose contracts these keep on an
	 * opaque instance): every channel of a hop in one batch. The host loads the model and computes
	 * the constants (dfn_consts_init), neural_new copies what it keeps; new, free and reset on the
	 * control thread (reset waits at most 100 ms for a hop in flight: GF_E_TIMEOUT then). submit
	 * takes a planar hop of every channel; collect waits for it until @p deadline_ns (0: the hung
	 * bound) and answers 0, 1 (late: not back yet, not hung; collect again), GF_E_TIMEOUT (in flight
	 * 250 ms: hung) or GF_E_CUDA. submit, collect and set_atten_lim on one thread at a time: RT-safe
	 * (no allocation, lock or log; the wait polls an event). error: the last failure's message. */
	int (*neural_new)(const struct dfn_model *m, const struct dfn_consts *k, uint32_t channels,
			  const struct dfn_params *p, int device, void **out, struct gf_errbuf *eb);
	void (*neural_free)(void *inst);
	int (*neural_submit)(void *inst, const float *in);
	int (*neural_collect)(void *inst, float *out, uint64_t deadline_ns);
	int (*neural_reset)(void *inst);
	void (*neural_set_atten_lim)(void *inst, float db);
	const char *(*neural_error)(const void *inst);
};

/** The module's entry point. @return its table, or NULL if @p host's ABI differs. */
typedef const struct gf_cuda_module *(*gf_cuda_module_entry_fn)(const struct gf_cuda_host *host);

/** The table of cuda/'s objects, where a program links them (weak in the loader). */
extern const struct gf_cuda_module gf_cu_module;

#ifdef __cplusplus
}
#endif

#endif
