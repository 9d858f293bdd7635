/*
 * Offline filtering of one file through a lane: check the paths, open the
 * input, take the filters at its rate and the lane's engine for them
 * (offline_ctx.c: built once, reset per file), open a temporary output, run
 * the pipeline (offline_pipeline.c), then rename the output into place or
 * remove it. gf_offline_run is one file through a lane of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "gpu.h"
#include "log.h"
#include "offline_internal.h"
#include "temp_file.h"

/*
 * Set-up (reading the config and filter files, designing, pre-convolving,
 * making the engine) writes nothing, so a stop signal then ends the process
 * at once (gf_offline_in_setup) instead of when the build is done: a 16M-tap
 * design or a huge taps file takes seconds, and Ctrl-C must not wait. The
 * temporary output itself, its removal on a fatal signal and the sweep of
 * dead runs' temporaries are base's (temp_file.h).
 */
static atomic_int setting_up; /* between the start of a run and its output's creation */

void gf_offline_setup_phase(int on)
{
	atomic_store(&setting_up, on);
}

int gf_offline_in_setup(void)
{
	return atomic_load(&setting_up);
}

struct run {
	struct gf_offline_lane *lane;
	struct gf_filter_set *fs;
	int fs_owned; /* built for this file alone (learned filters): no engine reuse */
	struct gf_engine *engine;
	struct gf_engine_stats st0; /* the engine's counters before this file */
	struct gf_progress *prog;
	SNDFILE *in, *out;
	SF_INFO in_info, out_info;
	struct gf_config_build_info built;
	struct gf_temp_file tmp; /* the output beside OUT until it is renamed into place */
	uint32_t chunk_frames;
	const struct gf_engine_params *cpu_params; /* a CPU engine like the lane's (stripes) */
	struct gf_offline_stripes stripes;
	struct gf_suppress_bank *sup; /* the chains' noise suppressor, new for each file; NULL: none */
};

static int open_input(struct run *r, const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	r->in = sf_open(o->input, SFM_READ, &r->in_info);
	if (!r->in) {
		gf_errbuf_set(eb, "cannot read %s: %s", o->input, sf_strerror(NULL));
		return GF_E_IO;
	}
	if (r->in_info.frames <= 0) {
		gf_errbuf_set(eb, "%s: no audio frames in the file (empty or truncated)", o->input);
		return GF_E_FORMAT;
	}
	if (r->in_info.channels <= 0 || r->in_info.samplerate <= 0) {
		gf_errbuf_set(eb, "%s: invalid header (%d channels, %d Hz)", o->input, r->in_info.channels,
			      r->in_info.samplerate);
		return GF_E_FORMAT;
	}
	if (r->in_info.samplerate < (int)GF_RATE_MIN || r->in_info.samplerate > (int)GF_RATE_MAX) {
		gf_errbuf_set(eb, "%s: sample rate %d Hz is not supported (%u to %u Hz): resample it first",
			      o->input, r->in_info.samplerate, GF_RATE_MIN, GF_RATE_MAX);
		return GF_E_FORMAT;
	}
	gf_offline_warn_if_truncated(r->in, &r->in_info, o->input);
	return 0;
}

/* The suppressor starts each file afresh: its noise estimate belongs to the file. It runs on the GPU
 * where the engine does (suppress_bank.h); a hop there waits GF_SUPPRESS_GPU_HOP_WAIT_NS at most.
 * Its CPU channels spread over the threads a file may use (--threads; a batch's share of the CPUs),
 * which the FIR leaves to it: a file with a suppressor is not striped (plan_stripes). */
static int take_suppressor(struct run *r, const char *input, uint32_t rate, uint32_t ch, struct gf_errbuf *eb)
{
	const struct gf_config *cfg;
	int err = gf_offline_ctx_config(r->lane->ctx, &cfg, eb);
	struct gf_chain_facts f = {.mode = GF_CHAIN_OFFLINE,
				   .rate = rate,
				   .channels = ch,
				   .out_channels = ch,
				   .gpu_index = r->lane->gpu_index,
				   .threads = r->lane->ctx->stripe_max};
	if (!err)
		err = gf_offline_ctx_suppressor(r->lane->ctx, input, &f, r->engine, &r->sup, eb);
	return gf_config_failure(err);
}

static int take_engine(struct run *r, const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	uint32_t rate = (uint32_t)r->in_info.samplerate, ch = (uint32_t)r->in_info.channels;
	int err =
		gf_offline_ctx_filters(r->lane->ctx, rate, ch, o->input, &r->fs, &r->fs_owned, &r->built, eb);
	if (err)
		return err;
	err = gf_offline_lane_engine(r->lane, r->fs, ch, &r->engine, &r->chunk_frames, &r->cpu_params, eb);
	if (!err)
		gf_engine_get_stats(r->engine, &r->st0);
	if (!err) /* the configuration was loaded by gf_offline_ctx_filters */
		err = take_suppressor(r, o->input, rate, ch, eb);
	return err;
}

static int open_output(struct run *r, const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	SF_INFO want = r->in_info; /* a mixer writes its outputs */
	want.channels = (int)gf_engine_out_channels(r->engine);
	int err = gf_offline_choose_format(&want, o, &r->out_info, eb);
	if (err)
		return err;
	gf_offline_setup_phase(0); /* from here on a stop signal must clean up */
	err = gf_temp_open(&r->tmp, o->output, 0, eb);
	if (err)
		return err;
	r->out = sf_open_fd(r->tmp.fd, SFM_WRITE, &r->out_info, SF_FALSE);
	if (!r->out) {
		gf_errbuf_set(eb, "cannot write %s: %s", o->output, sf_strerror(NULL));
		return GF_E_IO;
	}
	if (gf_offline_subtype_clips(r->out_info.format))
		sf_command(r->out, SFC_SET_CLIPPING, NULL, SF_TRUE);
	gf_offline_copy_strings(r->in, r->out);
	return 0;
}

/* The input's NaN/Inf samples (how many, the first, what they cost), and apart from them, blocks the
 * filter itself made NaN/Inf (of @p muted in all). */
static void report_nonfinite(const struct run *r, const struct gf_offline_pipeline *p,
			     const struct gf_offline_opts *o, uint64_t muted)
{
	const struct gf_offline_bad *b = &p->bad;
	if (b->samples)
		gf_warn("%s: the input has %llu NaN/Inf sample%s (the first at frame %llu, %.3f s, channel "
			"%u): "
			"%llu piece%s of %u frames holding them muted in %s, the rest filtered as if they "
			"were 0",
			o->input, (unsigned long long)b->samples, b->samples == 1 ? "" : "s",
			(unsigned long long)b->first_frame, (double)b->first_frame / r->in_info.samplerate,
			b->first_channel, (unsigned long long)b->pieces, b->pieces == 1 ? "" : "s",
			GF_OFFLINE_MUTE_FRAMES, o->output);
	if (muted > b->pieces)
		gf_warn("%s: %llu blocks were muted because the filter produced NaN/Inf", o->output,
			(unsigned long long)(muted - b->pieces));
}

static void report(const struct run *r, const struct gf_offline_pipeline *p, const struct gf_offline_opts *o)
{
	double secs = gf_progress_elapsed(r->prog);
	double audio = (double)p->frames_read / r->in_info.samplerate;
	double peak_db = p->peak > 0.0f ? 20.0 * log10(p->peak) : -INFINITY;
	if (p->clipped)
		gf_warn("%llu samples clipped (peak %+.2f dBFS): lower the gain in the configuration "
			"or write --format FLOAT",
			(unsigned long long)p->clipped, peak_db);
	else if (p->peak > 1.0f)
		gf_warn("peak %+.2f dBFS is above full scale (kept by the float output; integer "
			"formats would clip)",
			peak_db);
	struct gf_engine_stats st;
	gf_engine_get_stats(r->engine, &st);
	uint64_t muted = st.nonfinite_blocks - r->st0.nonfinite_blocks + p->stripe_nonfinite;
	report_nonfinite(r, p, o, muted);
	gf_log(r->lane->ctx->quiet_files ? GF_LOG_DEBUG : GF_LOG_INFO,
	       "%s -> %s: %llu frames (%.2f s, %d ch, %d Hz, %s %s) in %.3f s, %.1fx realtime; "
	       "%s/%s, %u taps; peak %.1f dBFS",
	       o->input, o->output, (unsigned long long)p->frames_written, audio, r->out_info.channels,
	       r->in_info.samplerate, gf_offline_major_name(r->out_info.format & SF_FORMAT_TYPEMASK),
	       gf_offline_format_name(r->out_info.format), secs, secs > 0.0 ? audio / secs : 0.0,
	       gf_engine_backend_name(r->engine), gf_engine_algo_name(r->engine), gf_engine_taps(r->engine),
	       peak_db);
	if (r->sup) {
		char where[96];
		gf_suppress_bank_where(r->sup, where, sizeof(where));
		gf_log(r->lane->ctx->quiet_files ? GF_LOG_DEBUG : GF_LOG_INFO, "suppressor: %s", where);
	}
}

static int stopped(const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	if (o->stop && atomic_load(o->stop)) {
		gf_errbuf_set(eb, "interrupted: %s was not written", o->output);
		return GF_E_INTERRUPTED;
	}
	return 0;
}

/* Close OUT and move it into place, or remove the temporary file. */
static int finish_output(struct run *r, const struct gf_offline_opts *o, int err, struct gf_errbuf *eb)
{
	if (r->out) {
		int rc = sf_close(r->out);
		r->out = NULL;
		if (rc && !err) {
			gf_errbuf_set(eb, "%s: write failed: %s", o->output, sf_error_number(rc));
			err = GF_E_IO;
		}
	}
	if (r->tmp.fd < 0)
		return err; /* never opened */
	if (err)
		gf_temp_discard(&r->tmp);
	else
		err = gf_temp_commit(&r->tmp, o->output, eb);
	return err;
}

static int prepare(struct run *r, const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	double t[4] = {(1e3 * gf_now_s()), 0.0, 0.0, 0.0};
	int err = gf_offline_check_paths(o->input, o->output, eb);
	if (!err)
		err = open_input(r, o, eb);
	if (!err) /* a stream from a pipe reports SF_COUNT_MAX frames: size unknown */
		gf_offline_ctx_note_input(r->lane->ctx, o->input,
					  r->in_info.frames == SF_COUNT_MAX
						  ? 0
						  : (uint64_t)r->in_info.frames *
							    (uint64_t)r->in_info.channels);
	t[1] = (1e3 * gf_now_s());
	if (!err) {
		const struct gf_config *cfg;
		err = gf_offline_ctx_config(r->lane->ctx, &cfg, eb);
	}
	t[2] = (1e3 * gf_now_s());
	if (!err)
		err = take_engine(r, o, eb);
	t[3] = (1e3 * gf_now_s());
	if (!err)
		err = stopped(o, eb);
	if (!err)
		err = open_output(r, o, eb);
	gf_debug("offline: set-up ms: input %.1f, configuration and taps %.1f, engine %.1f, output %.1f",
		 t[1] - t[0], t[2] - t[1], t[3] - t[2], (1e3 * gf_now_s()) - t[3]);
	return err;
}

/* Say what alignment removes: the chain's linear-phase delay, the suppressor's latency, or both. */
static void log_alignment(const struct run *r, const struct gf_offline_pipeline *p,
			  const struct gf_offline_opts *o, uint32_t sup_lag)
{
	double ms = 1e3 * (double)p->align.skip / r->in_info.samplerate;
	enum gf_log_level lvl = r->lane->ctx->quiet_files ? GF_LOG_DEBUG : GF_LOG_INFO;
	unsigned long long skip = (unsigned long long)p->align.skip;
	if (!sup_lag)
		gf_log(lvl,
		       "%s: output aligned with the input: the filter's linear-phase delay of %llu samples "
		       "(%.2f ms) is removed (--causal keeps it)",
		       o->output, skip, ms);
	else
		gf_log(lvl,
		       "%s: output aligned with the input: %llu samples (%.2f ms) are removed, the noise "
		       "suppressor's latency of %u and the filter's linear-phase delay of %llu (--causal "
		       "keeps them)",
		       o->output, skip, ms, sup_lag, skip - sup_lag);
}

/* On the CPU, a long file is filtered in stripes over the lane's threads (offline_stripe.c). */
static void plan_stripes(struct run *r)
{
	uint32_t ch = (uint32_t)r->in_info.channels;
	uint64_t frames = r->in_info.frames == SF_COUNT_MAX ? 0 : (uint64_t)r->in_info.frames;
	int cpu = strcmp(gf_engine_backend_name(r->engine), "cpu") == 0;
	uint32_t threads = cpu ? r->lane->ctx->stripe_max : 1;
	if (gf_filter_set_is_mixer(r->fs) && threads > 1) {
		/* A stripe filters its chunks in place from the input before them: with other
		 * output than input channels its output would overwrite the next stripe's input. */
		gf_debug("offline: one thread: a mixer is not striped");
		threads = 1;
	}
	if (r->sup && threads > 1) {
		/* The suppressor's state runs through the whole file in order: a stripe
		 * cannot start it from the input before it as the engine starts. Its
		 * channels spread over the threads instead (take_suppressor). */
		gf_debug("offline: the filter on one thread: the noise suppressor is sequential (no "
			 "stripes); its channels spread over up to %u threads",
			 threads);
		threads = 1;
	}
	gf_offline_stripe_plan(frames, gf_engine_taps(r->engine), ch, r->chunk_frames, threads, &r->stripes);
	if (r->stripes.threads > 1)
		gf_debug("offline: %u CPU threads over stripes of %u chunks (%u frames each), %u frames of "
			 "history a stripe",
			 r->stripes.threads, r->stripes.stripe_chunks, r->chunk_frames,
			 r->stripes.hist_frames);
}

int gf_offline_file_run(struct gf_offline_lane *l, const struct gf_offline_opts *o,
			struct gf_offline_file_stats *st, struct gf_errbuf *eb)
{
	struct run r = {.lane = l, .tmp = GF_TEMP_FILE_INIT};
	struct gf_offline_pipeline *p = &l->pipe;
	int have_pipeline = 0;
	double t0 = (1e3 * gf_now_s()), t1 = t0, t2 = t0, t3 = t0;
	int err = prepare(&r, o, eb);
	if (err)
		goto done;
	gf_debug("%s: %s, %s, %d ch, %d Hz, %lld frames -> %s: %s %s; engine: %s", o->input,
		 gf_offline_major_name(r.in_info.format & SF_FORMAT_TYPEMASK),
		 gf_offline_format_name(r.in_info.format), r.in_info.channels, r.in_info.samplerate,
		 (long long)r.in_info.frames, o->output,
		 gf_offline_major_name(r.out_info.format & SF_FORMAT_TYPEMASK),
		 gf_offline_format_name(r.out_info.format), gf_engine_describe(r.engine));
	t1 = (1e3 * gf_now_s());
	plan_stripes(&r);
	err = gf_offline_pipeline_prepare(p, o, (uint32_t)r.in_info.channels,
					  gf_engine_out_channels(r.engine), r.chunk_frames,
					  strcmp(gf_engine_backend_name(r.engine), "cuda") == 0, &r.stripes);
	p->stripe_params = r.cpu_params;
	p->stripe_fs = r.fs;
	have_pipeline = 1;
	t2 = (1e3 * gf_now_s());
	/* Streams from a pipe report SF_COUNT_MAX frames: no percent or ETA then. */
	uint64_t total = r.in_info.frames == SF_COUNT_MAX ? 0 : (uint64_t)r.in_info.frames;
	if (!err)
		err = gf_progress_new(&r.prog, o->progress ? stderr : NULL, total,
				      (uint32_t)r.in_info.samplerate);
	if (err) {
		gf_errbuf_set(eb, "%s", gf_strerror(err));
		goto done;
	}
	p->in = r.in;
	p->out = r.out;
	p->clips = gf_offline_subtype_clips(r.out_info.format);
	p->suppress = r.sup;
	uint32_t sup_lag = gf_suppress_bank_latency(r.sup);
	gf_offline_align_plan(&p->align, gf_engine_taps(r.engine), r.built.align_frames, sup_lag, o->tail,
			      o->causal);
	if (p->align.skip)
		log_alignment(&r, p, o, sup_lag);
	err = gf_offline_pipeline_run(p, r.engine, r.prog, eb);
	t3 = (1e3 * gf_now_s());
	gf_debug("offline: streaming ms busy: reader %.1f, engine %.1f, writer %.1f", p->busy_ms[0],
		 p->busy_ms[1], p->busy_ms[2]);
	gf_progress_finish(r.prog);
	if (!err && total && total != p->frames_read)
		gf_warn("%s: the header promised %lld frames, the file held %llu", o->input,
			(long long)r.in_info.frames, (unsigned long long)p->frames_read);
done:
	gf_offline_setup_phase(0);
	err = finish_output(&r, o, err, eb);
	if (!err)
		report(&r, p, o);
	if (have_pipeline && st)
		st->frames = err ? 0 : p->frames_written;
	if (st) { /* before the engine may be dropped below */
		st->on_gpu = !err && r.engine && strcmp(gf_engine_backend_name(r.engine), "cuda") == 0;
		st->rate = (uint32_t)(r.in_info.samplerate > 0 ? r.in_info.samplerate : 0);
		st->seconds = ((1e3 * gf_now_s()) - t0) / 1e3;
	}
	if (r.engine && (err || r.fs_owned || gf_engine_failed(r.engine)))
		gf_offline_lane_drop(l, r.fs); /* a failed file leaves no half-run engine behind */
	if (r.fs_owned)
		gf_filter_set_free(r.fs);
	if (have_pipeline)
		p->suppress = NULL;
	gf_suppress_bank_free(r.sup);
	gf_progress_free(r.prog);
	if (r.in)
		sf_close(r.in);
	gf_debug("offline: ms: set-up %.1f, pipeline buffers %.1f, streaming %.1f, finish and teardown %.1f",
		 t1 - t0, t2 - t1, t3 - t2, (1e3 * gf_now_s()) - t3);
	return err;
}

int gf_offline_run(const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	struct gf_offline_ctx ctx;
	struct gf_offline_lane lane;
	int err = gf_offline_ctx_init(&ctx, o);
	if (err) {
		gf_errbuf_set(eb, "%s", gf_strerror(err));
		return err;
	}
	ctx.stripe_max = o->threads ? o->threads : gf_offline_cpus();
	gf_offline_lane_init(&lane, &ctx, o->gpu_set ? o->gpu_index : -1, GF_BACKEND_AUTO);
	/* One file: a stop signal before its temporary output exists ends the run at
	 * once (main.c). Not in a batch, where other lanes may be writing. */
	gf_offline_setup_phase(1);
	err = gf_offline_file_run(&lane, o, NULL, eb);
	gf_offline_lane_free(&lane);
	gf_offline_ctx_free(&ctx);
	gf_cuda_prewarm_wait(); /* a failed set-up may leave CUDA's start-up running */
	return err;
}
