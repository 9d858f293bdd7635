/**
 * @file backend.h
 * The function table every convolution backend implements (internal to the
 * engine). No CUDA type appears here: cuda/ implements gf_cuda_backend
 * behind this plain C table.
 *
 * An instance convolves with one filter set. It is created off the audio path
 * (all allocation, planning, device memory and tap upload happen in create),
 * then used from one audio thread.
 */
#ifndef GPUFIR_BACKEND_H
#define GPUFIR_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "engine.h"

struct gf_backend_ops {
	const char *name; /**< "cpu", "cuda" */

	/** Control thread. Build an instance for @p fs (fs->channels == p->channels). */
	int (*create)(const struct gf_engine_params *p, const struct gf_filter_set *fs, void **inst,
		      struct gf_errbuf *eb);

	/**
	 * Before the first submit() of an instance that replaces another, on the
	 * control thread (which publishes it afterwards; never the audio thread):
	 * load input history. @p history holds @p frames
	 * interleaved frames, oldest first; anything older counts as zero. frames may exceed taps-1 (use the
	 * newest) or be fewer (stream just started). No allocation.
	 */
	int (*prime)(void *inst, const float *history, uint32_t frames);

	/**
	 * Audio thread. Start the zero-latency convolution of 1..max_block
	 * frames; never waits. Calls that fit one staging chunk (every live
	 * block) have consumed @p in when it returns; a larger call (offline)
	 * may read @p in until finish() returns. RT-safe. One call in flight
	 * per instance: finish() before the next submit().
	 * @return 0; GF_E_BUSY: the instance cannot take a call just now (another
	 * thread holds it for a moment, e.g. a persistent kernel's handover):
	 * nothing was submitted, try again at the next block; other codes: the
	 * instance failed.
	 */
	int (*submit)(void *inst, const float *in, uint32_t frames);

	/**
	 * Audio thread. Wait until the work of the last submit() is done, but
	 * not past @p deadline_ns (CLOCK_MONOTONIC), and write its output to
	 * @p out (which may be the submit()'s input). A backend that computes
	 * here (the CPU) is not bounded by the deadline: only waits are.
	 * @return 0; GF_E_TIMEOUT if the work is still in flight at the
	 * deadline: the call stays submitted and a later finish() (a deadline
	 * already past polls once, without waiting) collects it, with the same
	 * output, so the instance's state stays that of the input it was given;
	 * no submit() until it has. Other codes: the instance failed (a call
	 * that cannot be collected after a missed deadline says so this way).
	 */
	int (*finish)(void *inst, float *out, uint64_t deadline_ns);

	/**
	 * Optional (NULL: its work always ends with its calls, as the CPU's).
	 * Control thread, for an instance the engine gave up on (a call in flight
	 * for too long, or failed; it is not called again): ask its work on the
	 * device to end (a persistent kernel's stop, a test hook's spin released)
	 * and say whether it has, waiting at most a few milliseconds. @return 1:
	 * nothing of it runs any more, destroy() will not block; 0: still
	 * running, ask again later.
	 */
	int (*stop)(void *inst);

	/** Control thread. Accepts NULL. */
	void (*destroy)(void *inst);

	/** "direct" or "fft". */
	const char *(*algo_name)(const void *inst);

	/** Device/backend description for logs ("NVIDIA H200 (sm_90, 139 GiB)"). */
	const char *(*describe)(const void *inst);

	/**
	 * Optional (NULL: nothing to check). Control thread, before create():
	 * would an instance for @p p and a filter of @p taps taps fit the memory
	 * only this backend knows about (device memory, its pinned host
	 * buffers)? Allocates nothing. @return 0, or GF_E_NOMEM with how much it
	 * needs and how much is available in @p eb (other codes: as create()).
	 */
	int (*check_memory)(const struct gf_engine_params *p, uint32_t taps, struct gf_errbuf *eb);
};

/** The name a log line gives the backend ("CUDA backend failed ..."); a
 * function, not a field, so the CUDA module's table (its ABI) stays as it is. */
static inline const char *gf_backend_label(const struct gf_backend_ops *ops)
{
	if (strcmp(ops->name, "cuda") == 0)
		return "CUDA";
	return strcmp(ops->name, "cpu") == 0 ? "CPU" : ops->name;
}

/** Deadline of gf_backend_process: generous, for callers without a block period. */
#define GF_BACKEND_SYNC_DEADLINE_NS (60ull * 1000000000u)

/**
 * submit() then finish() with a generous deadline: one synchronous call
 * (tests, benchmarks). Same thread and RT contract as submit/finish.
 */
static inline int gf_backend_process(const struct gf_backend_ops *ops, void *inst, const float *in,
				     float *out, uint32_t frames)
{
	int err = ops->submit(inst, in, frames);
	return err ? err : ops->finish(inst, out, gf_now_ns() + GF_BACKEND_SYNC_DEADLINE_NS);
}

extern const struct gf_backend_ops gf_cpu_backend;
/** Present in every build; create() fails with GF_E_UNSUPPORTED without CUDA. */
extern const struct gf_backend_ops gf_cuda_backend;

#endif
