/**
 * @file suppress_gpu.h
 * The noise suppressor of suppress.h on a CUDA GPU, for many channels at once:
 * the same frames, window, recursions and latency, every channel's frame of
 * a hop run in one batch (one batched cuFFT plan each way, one thread per
 * channel and bin). Its output equals the CPU suppressor's up to the two FFT
 * libraries' rounding (tests/gpu/test_gpu_suppress.c measures how close).
 *
 * The host's side (suppress_gpu.c) sets up through the CPU suppressor (its
 * checks, frame, constants, window and noise seed: gf_suppress_shape_of) and
 * hands that shape to the CUDA module (cuda/suppress/cu_suppress.cu, through
 * the loader: cuda_module.h), which runs it; a build without CUDA, a missing
 * module or no device is an error of new(), never a crash.
 *
 * Threads: new/free/reset on the control thread (they allocate, plan cuFFT
 * and wait, bounded); process() on the audio thread: no allocation, lock or
 * I/O; each hop's work on the GPU is waited for by polling, until at most
 * GF_SUPPRESS_GPU_HOP_WAIT_NS, never by a blocking synchronize.
 */
#ifndef GPUFIR_SUPPRESS_GPU_H
#define GPUFIR_SUPPRESS_GPU_H

#include <stdint.h>

#include "error.h"
#include "suppress.h"

/* A hop's round trip is tens of microseconds up to a few milliseconds for a thousand channels: one
 * still in flight this long after its submission is a hung or lost GPU, not a slow one (a host
 * stall that makes a hop late is a block or two: tens of ms at most). It is about 20 blocks of 512
 * frames at 48 kHz, short enough that a hung GPU costs a quarter second of the group's sound. */
#define GF_SUPPRESS_GPU_HOP_WAIT_NS 250000000ull

/* gf_suppress_gpu_process_by's answer when a hop was not back by the caller's deadline and is not
 * hung: no failure. The call's frames from that hop on are silence; the hop stays in flight and
 * the next call collects it before it takes a frame. */
#define GF_SUPPRESS_GPU_LATE 1

struct gf_suppress_gpu;

/**
 * Control thread: @p channels interleaved channels at @p rate on CUDA device @p device.
 * @return 0, GF_E_INVAL (bad parameters, as gf_suppress_new), GF_E_NOGPU (no such device),
 * GF_E_CUDA, GF_E_FFT or GF_E_NOMEM; the reason in @p eb.
 */
int gf_suppress_gpu_new(const struct gf_suppress_params *p, uint32_t channels, uint32_t rate, int device,
			struct gf_suppress_gpu **out, struct gf_errbuf *eb);

/** Accepts NULL. Control thread; waits (bounded) for work still in flight. */
void gf_suppress_gpu_free(struct gf_suppress_gpu *s);

/** Frames the output lags the input: the CPU suppressor's latency at the same rate. */
uint32_t gf_suppress_gpu_latency(const struct gf_suppress_gpu *s);

/**
 * Suppress noise in @p buf (@p frames interleaved frames), in place, as gf_suppress_process does.
 * Audio thread. @return 0, GF_SUPPRESS_GPU_LATE (see above), or GF_E_CUDA / GF_E_TIMEOUT (a hop
 * failed, or was hung: in flight GF_SUPPRESS_GPU_HOP_WAIT_NS): then that call's @p buf is silence,
 * and so is every later call's until reset() succeeds. The message is in gf_suppress_gpu_error().
 *
 * Across a late hop the stream stays whole: the frames taken while it is in flight are silence on
 * the way out, but their input is kept (the first hop of it; more is fed as silence) and fed to the
 * GPU once the hop is back, so the noise estimates and the overlap-add advance over every frame,
 * the late hop's output (due for exactly those muted frames) is dropped, never played later, and
 * every channel keeps its alignment.
 */
int gf_suppress_gpu_process(struct gf_suppress_gpu *s, float *buf, uint32_t frames);

/**
 * gf_suppress_gpu_process, with every hop of the call waited for until @p deadline_ns at the
 * latest (gf_now_ns() time; 0: each hop until it is hung, never late): a stream passes its block's
 * deadline, so that a slow GPU costs a muted hop, not an underrun.
 */
int gf_suppress_gpu_process_by(struct gf_suppress_gpu *s, float *buf, uint32_t frames, uint64_t deadline_ns);

/**
 * gf_suppress_gpu_process_by on a run of channels inside a wider interleave: frame i's channels
 * at @p buf + i * @p stride, the suppressor's channels first in each frame (@p stride >= its
 * channels; the rest of each frame is left alone), read and written there with no gather or
 * scatter of the caller's. @return as process_by, or GF_E_INVAL for a stride below the channels.
 */
int gf_suppress_gpu_process_rows(struct gf_suppress_gpu *s, float *buf, uint32_t stride, uint32_t frames,
				 uint64_t deadline_ns);

/** Ramp the gain's floor of every channel to @p g, as gf_suppress_set_floor: from the next hop
 * on. Audio thread (or control thread, audio stopped). RT-safe: no call to the GPU. */
void gf_suppress_gpu_set_floor(struct gf_suppress_gpu *s, float g);

/**
 * gf_suppress_set_hum for every channel: the table reaches the audio thread as the CPU suppressor's
 * does (lock-free) and goes up to the GPU with the next hop. Control thread, while audio runs.
 */
void gf_suppress_gpu_set_hum(struct gf_suppress_gpu *s, const struct gf_suppress_hum *h);

/** Back to the state new() made. Control thread, audio stopped. @return 0, GF_E_CUDA or GF_E_TIMEOUT. */
int gf_suppress_gpu_reset(struct gf_suppress_gpu *s);

/** The last failure's message ("" when none). */
const char *gf_suppress_gpu_error(const struct gf_suppress_gpu *s);

#endif
