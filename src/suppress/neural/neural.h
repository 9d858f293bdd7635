/**
 * @file neural.h
 * The backends of the neural denoising stage (`design = "deepfilter"`,
 * neural_bank.h): one table of operations per way of running DeepFilterNet3,
 * the reference runtime (neural_ref.c), the engine's own inference on the CPU
 * (neural_dfn.c) and on the GPU (neural_gpu.c). A backend instance holds the
 * state of a fixed number of channels and advances them one hop
 * (GF_NEURAL_HOP frames at GF_NEURAL_RATE) at a time; channels share no
 * state, so disjoint runs of channels may be processed on different threads
 * at once. The GPU's runs every channel of a hop in one batch, away from the
 * caller: it has submit and collect, which the stage waits on with its
 * deadline, where the CPU's run on the stage's helper threads.
 *
 * Threads: create/free on the control (or build) thread: they load the
 * model, allocate and may fail. process() on any one thread per run of
 * channels: no allocation, lock or I/O in the backend's own code (the
 * reference runtime's inference is its own: see neural_ref.c).
 */
#ifndef GPUFIR_NEURAL_H
#define GPUFIR_NEURAL_H

#include <stdint.h>

#include "error.h"

/** The one rate DeepFilterNet3 runs at. */
#define GF_NEURAL_RATE 48000u
/** Its hop: the frames each process() call advances a channel by. */
#define GF_NEURAL_HOP 480u
/** The model as DeepFilterNet ships it (the reference runtime loads it). */
#define GF_NEURAL_TARBALL_FILE "DeepFilterNet3_onnx.tar.gz"
/** Its conversion for the engine's own inference (scripts/dfn-convert.py), installed beside it. */
#define GF_NEURAL_DFN_FILE "DeepFilterNet3.dfn"
/** collect()'s answer for a hop not back by the deadline and not hung: no failure, collect again. */
#define GF_NEURAL_LATE 1
/** atten_lim_db: the most any bin is cut; DeepFilterNet's default, 100 dB, means no limit. */
#define GF_NEURAL_MAX_ATTEN_LIM_DB 100.0
/** post_filter_beta: 0 turns the post-filter off; DeepFilterNet suggests 0.02 (up to 0.05). */
#define GF_NEURAL_MAX_POST_FILTER_BETA 0.5

/** How a stage runs the model. */
struct gf_neural_params {
	const char *model;   /**< the model file: DeepFilterNet3_onnx.tar.gz (reference), DeepFilterNet3.dfn
				(engine) */
	const char *library; /**< the reference runtime (libdeepfilter.so); NULL: the default */
	float atten_lim_db;  /**< the most any bin is cut, dB (the stage's depth) */
	float post_filter_beta; /**< 0: off */
	int gpu_index;		/**< the CUDA device (the GPU's backend alone) */
};

/** One way of running the model (the reference runtime: gf_neural_ref_ops). */
struct gf_neural_ops {
	const char *name;
	/** An instance of @p channels channels. @return 0, GF_E_INVAL/GF_E_IO (message in @p eb),
	 * GF_E_NOMEM. Control thread. */
	int (*create)(const struct gf_neural_params *p, uint32_t channels, void **out, struct gf_errbuf *eb);
	/** One hop of channels [first, first + n): @p in and @p out planar, channel c's hop at
	 * (c - first) * GF_NEURAL_HOP. One thread per disjoint run of channels. */
	void (*process)(void *inst, uint32_t first, uint32_t n, const float *in, float *out);
	/** Sets the attenuation limit, applied from the next hop of each channel. Call from the
	 * thread that runs process() for those channels, between hops. */
	void (*set_atten_lim)(void *inst, uint32_t first, uint32_t n, float db);
	/** Frames a channel's output lags its input inside the model (the stage adds its hop). */
	uint32_t (*latency)(const void *inst);
	/** Accepts NULL. Control thread. */
	void (*free)(void *inst);
	/** Channels [first, first + n) back to the state create() made, the attenuation limit kept: a
	 * standby that takes over starts clean. The CPU's: the thread that runs those channels, between
	 * hops, RT-safe. The GPU's: every channel (0, all), control thread, waiting a bounded time for a
	 * hop in flight. @return 0 or GF_E_* (GF_E_TIMEOUT: a hop still in flight). NULL: none (the
	 * reference runtime's C API has no reset). */
	int (*reset)(void *inst, uint32_t first, uint32_t n);
	/* A backend that runs every channel's hop at once away from the caller (the GPU) has these; the
	 * CPU's have NULL. One thread at a time, RT-safe: no allocation, lock or log. */
	/** Start one hop of every channel: @p in planar, read before this returns. @return 0 or GF_E_*
	 * (a failure: GF_E_CUDA, GF_E_BUSY where the last hop was not collected). */
	int (*submit)(void *inst, const float *in);
	/** Wait for the hop submitted last until @p deadline_ns (gf_now_ns() time; 0: until it counts as
	 * hung), its output into @p out (planar). @return 0, GF_NEURAL_LATE, GF_E_TIMEOUT (in flight
	 * GF_NEURAL_HANG_NS: hung) or GF_E_CUDA. */
	int (*collect)(void *inst, float *out, uint64_t deadline_ns);
	/** The last failure's message (control thread, once the stage stopped using the instance). */
	const char *(*error)(const void *inst);
};

/** The reference runtime: DeepFilterNet's own C API in libdeepfilter.so (neural_ref.c). */
extern const struct gf_neural_ops gf_neural_ref_ops;

/** The engine's own inference (src/dfn) on the CPU, one forward per channel (neural_dfn.c): the
 * same latency as the reference, its output within docs/neural.md's tolerance of it. */
extern const struct gf_neural_ops gf_neural_dfn_ops;

/** gpufir's own inference on the GPU (neural_gpu.c, cuda/dfn through the CUDA module): every
 * channel of a hop in one batch, the same latency and model file as gf_neural_dfn_ops, its output
 * within docs/neural.md's tolerance of it. create: GF_E_UNSUPPORTED or GF_E_NOGPU where no GPU can
 * run it. */
extern const struct gf_neural_ops gf_neural_gpu_ops;

/** The converted model (GF_NEURAL_DFN_FILE) at @p path, loaded: GF_E_IO naming it and why (a wrong
 * or corrupt file too: the config's to fix), or GF_E_NOMEM. Control thread. */
struct dfn_model;
int gf_neural_dfn_load(const char *path, struct dfn_model **out, struct gf_errbuf *eb);

/** Where the reference runtime and the model are looked for when the config names neither:
 * $GPUFIR_DEEPFILTER_DIR, else the directory the build was configured with. Any thread. */
const char *gf_neural_default_dir(void);

#endif
