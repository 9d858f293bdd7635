/**
 * @file gpu.h
 * The GPU services the layers above the engine may use: probing a device,
 * pinning host memory for DMA, starting CUDA early and ending persistent
 * kernels before exit. Present in every build: without CUDA (the stub) or
 * without a usable GPU they fail with GF_E_UNSUPPORTED / GF_E_NOGPU and
 * change nothing. No CUDA type appears here.
 *
 * Threads: the control thread, except gf_cuda_quit_kernels (anywhere).
 */
#ifndef GPUFIR_GPU_H
#define GPUFIR_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Is a CUDA device usable? Fills @p desc with its description or the reason
 * none is. Safe to call without a GPU or driver. @return 0 or GF_E_NOGPU / GF_E_UNSUPPORTED
 */
int gf_cuda_probe(int gpu_index, char *desc, uint32_t desc_len);

/**
 * Page-lock host memory the CUDA driver can DMA from (cudaHostRegister), so
 * rings and chunks allocated on the host side are "pinned". Control thread.
 * @return 0, or GF_E_UNSUPPORTED / GF_E_NOGPU / GF_E_CUDA (memory stays usable, unpinned)
 */
int gf_cuda_pin(void *ptr, size_t bytes);
/**
 * Undo gf_cuda_pin before freeing. Accepts memory that was never pinned.
 * @return 0: free the memory; 1: GPU work that missed its deadline (which may
 * still reach it) or a resident persistent kernel would make the unregistering
 * wait for good, so it stays pinned and must not be freed (leak it: it lives
 * until the process ends)
 */
int gf_cuda_unpin(void *ptr);

/**
 * Start CUDA (driver, runtime, the device's context) on a background thread,
 * so that its start-up overlaps the caller's other set-up; the CUDA entry
 * points wait for it. Once per process; GPUFIR_CUDA_PREWARM=0 turns it off.
 * Control thread.
 */
void gf_cuda_prewarm(int gpu_index);
/**
 * End every persistent kernel of the process, the abandoned ones too (sets a
 * host-mapped flag they poll; no CUDA call, safe anywhere). Before _exit():
 * the driver's teardown would otherwise wait for them.
 */
void gf_cuda_quit_kernels(void);
/** Wait for gf_cuda_prewarm's thread (call before returning from a path that may not have used CUDA). */
void gf_cuda_prewarm_wait(void);
/**
 * A persistent kernel may be asked for (engine parameter gpu_path not LAUNCHED): CUDA is to start
 * with the 32 hardware queues it needs (docs/cuda.md). No effect once CUDA has started in this
 * process, nor where the user set CUDA_DEVICE_MAX_CONNECTIONS. Loads the module. Control thread.
 */
void gf_cuda_ask_persistent(void);

/*
 * The noise suppressor in the CUDA module (cuda_module.h's suppress_* entries), for
 * src/suppress/suppress_gpu.c alone, with its contracts on the module's opaque instance. new() loads
 * the module; GF_E_UNSUPPORTED where there is none (a build without CUDA, or not installed).
 */
struct gf_suppress_shape;
struct gf_errbuf;
int gf_cuda_suppress_new(const struct gf_suppress_shape *sh, uint32_t channels, int device, void **out,
			 struct gf_errbuf *eb);
void gf_cuda_suppress_free(void *inst); /* accepts NULL */
int gf_cuda_suppress_process(void *inst, float *buf, uint32_t stride, uint32_t frames, uint64_t deadline_ns);
int gf_cuda_suppress_reset(void *inst);
const char *gf_cuda_suppress_error(const void *inst);
void gf_cuda_suppress_set_floor(void *inst, float g);
void gf_cuda_suppress_hum(void *inst, const float *hum);

/*
 * The neural stage's GPU forward in the CUDA module (cuda_module.h's neural_* entries), for
 * src/suppress/neural/neural_gpu.c alone, with their contracts on the module's opaque instance. new() loads
 * the module; GF_E_UNSUPPORTED where there is none (a build without CUDA, or not installed).
 */
struct dfn_model;
struct dfn_consts;
struct dfn_params;
int gf_cuda_neural_new(const struct dfn_model *m, const struct dfn_consts *k, uint32_t channels,
		       const struct dfn_params *p, int device, void **out, struct gf_errbuf *eb);
void gf_cuda_neural_free(void *inst); /* accepts NULL */
int gf_cuda_neural_submit(void *inst, const float *in);
int gf_cuda_neural_collect(void *inst, float *out, uint64_t deadline_ns);
int gf_cuda_neural_reset(void *inst);
void gf_cuda_neural_set_atten_lim(void *inst, float db);
const char *gf_cuda_neural_error(const void *inst);

#ifdef __cplusplus
}
#endif

#endif
