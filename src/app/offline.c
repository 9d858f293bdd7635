/*
 * Offline filtering of one file: check the paths, open the input, build the
 * filters at its rate, start the engine, open a temporary output, run the
 * pipeline (offline_pipeline.c), then rename the output into place or remove it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "config.h"
#include "log.h"
#include "offline_internal.h"

#define MAX_CHUNK_BYTES (8u << 20) /* many-channel files get shorter chunks */

struct run {
	struct gf_config *cfg;
	struct gf_filter_set *fs;
	struct gf_engine *engine;
	struct gf_progress *prog;
	SNDFILE *in, *out;
	SF_INFO in_info, out_info;
	struct gf_config_build_info built;
	char *tmp_path;
	int tmp_fd;
	uint32_t chunk_frames;
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
	gf_offline_warn_if_truncated(r->in, o->input, r->in_info.frames);
	return 0;
}

/* Config and filters at the file's rate and channel count: any failure is a config error. */
static int build_filters(struct run *r, const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	int err = gf_config_load_source(&o->src, &r->cfg, eb);
	if (err)
		return err == GF_E_NOMEM ? err : GF_E_CONFIG;
	if (r->cfg->backend != GF_BACKEND_CPU)
		gf_cuda_prewarm(r->cfg->gpu_index); /* CUDA starts while the taps are read */
	if (!o->log_level_set)
		gf_log_set_level(r->cfg->log_level);
	uint32_t rate = (uint32_t)r->in_info.samplerate, ch = (uint32_t)r->in_info.channels;
	if (r->cfg->sample_rate && r->cfg->sample_rate != rate)
		gf_warn("%s sets sample_rate = %u Hz but %s is %u Hz: designing the filters at "
			"%u Hz, the file's rate (WAV impulse responses must match it)",
			r->cfg->path ? r->cfg->path : "the configuration", r->cfg->sample_rate, o->input,
			rate, rate);
	r->cfg->program_file = o->input; /* learned filters measure what they will filter */
	err = gf_config_build_ex(r->cfg, rate, ch, &r->fs, &r->built, eb);
	if (err)
		return err == GF_E_NOMEM ? err : GF_E_CONFIG;
	return 0;
}

static int make_engine(struct run *r, const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	struct gf_engine_params ep = {
		.backend = r->cfg->backend,
		.algo = r->cfg->algo,
		.channels = (uint32_t)r->in_info.channels,
		.max_block = r->chunk_frames,
		.gpu_index = r->cfg->gpu_index,
		.retry = 1, /* a backend failing mid-file: redo the chunk on the CPU (filter_chunk) */
	};
	struct gf_errbuf eeb = {{0}};
	int err = gf_engine_new(&r->engine, &ep, r->fs, &eeb);
	if (err)
		gf_errbuf_set(eb, "cannot start the engine: %s", eeb.msg[0] ? eeb.msg : gf_strerror(err));
	return err;
}

static int open_output(struct run *r, const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	int err = gf_offline_choose_format(&r->in_info, o, &r->out_info, eb);
	if (!err)
		err = gf_offline_open_temp(o->output, &r->tmp_path, &r->tmp_fd, eb);
	if (err)
		return err;
	r->out = sf_open_fd(r->tmp_fd, SFM_WRITE, &r->out_info, SF_FALSE);
	if (!r->out) {
		gf_errbuf_set(eb, "cannot write %s: %s", o->output, sf_strerror(NULL));
		return GF_E_IO;
	}
	if (gf_offline_subtype_clips(r->out_info.format))
		sf_command(r->out, SFC_SET_CLIPPING, NULL, SF_TRUE);
	gf_offline_copy_strings(r->in, r->out);
	return 0;
}

static uint32_t pick_chunk_frames(const struct gf_offline_opts *o, uint32_t channels)
{
	uint32_t f = o->chunk_frames ? o->chunk_frames : GF_OFFLINE_CHUNK_FRAMES;
	uint32_t cap = MAX_CHUNK_BYTES / (channels * (uint32_t)sizeof(float));
	if (!o->chunk_frames && f > cap)
		f = cap > 1024 ? cap : 1024;
	return f;
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
	if (st.nonfinite_blocks)
		gf_warn("%llu blocks were muted because the filter produced NaN/Inf",
			(unsigned long long)st.nonfinite_blocks);
	gf_info("%s -> %s: %llu frames (%.2f s, %d ch, %d Hz, %s %s) in %.3f s, %.1fx realtime; "
		"%s/%s, %u taps; peak %.1f dBFS",
		o->input, o->output, (unsigned long long)p->frames_written, audio, r->in_info.channels,
		r->in_info.samplerate, gf_offline_major_name(r->out_info.format & SF_FORMAT_TYPEMASK),
		gf_offline_format_name(r->out_info.format), secs, secs > 0.0 ? audio / secs : 0.0,
		gf_engine_backend_name(r->engine), gf_engine_algo_name(r->engine), gf_engine_taps(r->engine),
		peak_db);
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
	if (r->tmp_fd >= 0) {
		if (close(r->tmp_fd) != 0 && !err) {
			gf_errbuf_set(eb, "%s: write failed: %s", o->output, strerror(errno));
			err = GF_E_IO;
		}
		r->tmp_fd = -1;
	}
	if (!r->tmp_path)
		return err;
	if (!err && rename(r->tmp_path, o->output) != 0) {
		gf_errbuf_set(eb, "cannot rename the finished output to %s: %s", o->output, strerror(errno));
		err = GF_E_IO;
	}
	if (err)
		unlink(r->tmp_path);
	gf_offline_temp_forget();
	free(r->tmp_path);
	r->tmp_path = NULL;
	return err;
}

static int prepare(struct run *r, const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	double t[4] = {gf_offline_now_ms(), 0.0, 0.0, 0.0};
	int err = gf_offline_check_paths(o->input, o->output, eb);
	if (!err)
		err = open_input(r, o, eb);
	t[1] = gf_offline_now_ms();
	if (!err)
		err = build_filters(r, o, eb);
	t[2] = gf_offline_now_ms();
	if (!err) {
		r->chunk_frames = pick_chunk_frames(o, (uint32_t)r->in_info.channels);
		err = make_engine(r, o, eb);
	}
	t[3] = gf_offline_now_ms();
	if (!err)
		err = stopped(o, eb);
	if (!err)
		err = open_output(r, o, eb);
	gf_debug("offline: set-up ms: input %.1f, configuration and taps %.1f, engine %.1f, output %.1f",
		 t[1] - t[0], t[2] - t[1], t[3] - t[2], gf_offline_now_ms() - t[3]);
	return err;
}

int gf_offline_run(const struct gf_offline_opts *o, struct gf_errbuf *eb)
{
	struct run r = {.tmp_fd = -1};
	gf_offline_setup_phase(1);
	struct gf_offline_pipeline p;
	int have_pipeline = 0;
	double t0 = gf_offline_now_ms(), t1 = t0, t2 = t0, t3 = t0;
	int err = prepare(&r, o, eb);
	if (err)
		goto done;
	gf_debug("%s: %s, %s, %d ch, %d Hz, %lld frames -> %s: %s %s; engine: %s", o->input,
		 gf_offline_major_name(r.in_info.format & SF_FORMAT_TYPEMASK),
		 gf_offline_format_name(r.in_info.format), r.in_info.channels, r.in_info.samplerate,
		 (long long)r.in_info.frames, o->output,
		 gf_offline_major_name(r.out_info.format & SF_FORMAT_TYPEMASK),
		 gf_offline_format_name(r.out_info.format), gf_engine_describe(r.engine));
	t1 = gf_offline_now_ms();
	err = gf_offline_pipeline_init(&p, o, (uint32_t)r.in_info.channels, r.chunk_frames,
				       strcmp(gf_engine_backend_name(r.engine), "cuda") == 0);
	have_pipeline = 1;
	t2 = gf_offline_now_ms();
	/* Streams from a pipe report SF_COUNT_MAX frames: no percent or ETA then. */
	uint64_t total = r.in_info.frames == SF_COUNT_MAX ? 0 : (uint64_t)r.in_info.frames;
	if (!err)
		err = gf_progress_new(&r.prog, o->progress ? stderr : NULL, total,
				      (uint32_t)r.in_info.samplerate);
	if (err) {
		gf_errbuf_set(eb, "%s", gf_strerror(err));
		goto done;
	}
	p.in = r.in;
	p.out = r.out;
	p.clips = gf_offline_subtype_clips(r.out_info.format);
	gf_offline_align_plan(&p.align, gf_engine_taps(r.engine), r.built.align_frames, o->tail, o->causal);
	if (p.align.skip)
		gf_info("%s: output aligned with the input: the filter's linear-phase delay of %llu samples "
			"(%.2f ms) is removed (--causal keeps it)",
			o->output, (unsigned long long)p.align.skip,
			1e3 * (double)p.align.skip / r.in_info.samplerate);
	err = gf_offline_pipeline_run(&p, r.engine, r.prog, eb);
	t3 = gf_offline_now_ms();
	gf_debug("offline: streaming ms busy: reader %.1f, engine %.1f, writer %.1f", p.busy_ms[0],
		 p.busy_ms[1], p.busy_ms[2]);
	gf_progress_finish(r.prog);
	if (!err && total && total != p.frames_read)
		gf_warn("%s: the header promised %lld frames, the file held %llu", o->input,
			(long long)r.in_info.frames, (unsigned long long)p.frames_read);
done:
	gf_offline_setup_phase(0);
	err = finish_output(&r, o, err, eb);
	if (!err)
		report(&r, &p, o);
	if (have_pipeline)
		gf_offline_pipeline_free(&p);
	gf_progress_free(r.prog);
	gf_engine_free(r.engine);
	gf_filter_set_free(r.fs);
	gf_config_free(r.cfg);
	if (r.in)
		sf_close(r.in);
	gf_cuda_prewarm_wait(); /* a failed set-up may leave CUDA's start-up running */
	gf_debug("offline: ms: set-up %.1f, pipeline buffers %.1f, streaming %.1f, finish and teardown %.1f",
		 t1 - t0, t2 - t1, t3 - t2, gf_offline_now_ms() - t3);
	return err;
}
