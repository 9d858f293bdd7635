/**
 * @file neural.h
 * The backends of the neural denoising stage (`design = "deepfilter"`,
 * neural_bank.h): one table of operations per way of running DeepFilterNet3,
 * the reference runtime (neural_ref.c) and the engine's own inference
 * (neural_dfn.c). A backend instance holds the state of a fixed number of
 * channels and advances them one hop (GF_NEURAL_HOP frames at
 * GF_NEURAL_RATE) at a time; channels share no state, so disjoint runs of
 * channels may be processed on different threads at once.
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
};

/** The reference runtime: DeepFilterNet's own C API in libdeepfilter.so (neural_ref.c). */
extern const struct gf_neural_ops gf_neural_ref_ops;

/** The engine's own inference (src/dfn) on the CPU, one forward per channel (neural_dfn.c): the
 * same latency as the reference, its output within docs/neural.md's tolerance of it. */
extern const struct gf_neural_ops gf_neural_dfn_ops;

/** Where the reference runtime and the model are looked for when the config names neither:
 * $GPUFIR_DEEPFILTER_DIR, else the directory the build was configured with. Any thread. */
const char *gf_neural_default_dir(void);

#endif
