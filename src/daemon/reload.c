#include "reload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_set.h"
#include "log.h"
#include "response_view.h"

int gf_reload_load_config(const struct gf_config_source *src, struct gf_config **out, struct gf_errbuf *eb)
{
	int err = gf_config_load_source(src, out, eb);
	if (err) /* a config that cannot be read is not one: exit 6 at start-up, as offline */
		return gf_config_failure(err);
	struct gf_config *c = *out;
	/* Explicit live defaults, so that "unset" and "set to the default" compare equal. */
	if (c->sample_rate == 0)
		c->sample_rate = GF_CHAIN_DEFAULT_RATE;
	uint32_t mix_in, mix_out;
	gf_config_mixer_channels(c, &mix_in, &mix_out);
	if (c->input.channels == 0) /* a mixer's stream carries its channels */
		c->input.channels = mix_in ? mix_in : GF_RELOAD_DEFAULT_CHANNELS;
	/* Playback carries what the filter writes: a mixer's outputs, else the input's channels. */
	uint32_t writes = mix_out ? mix_out : c->input.channels;
	if (c->output.channels == 0) {
		c->output.channels = writes;
	} else if (c->output.channels != writes) {
		gf_errbuf_set(eb,
			      "%s: output.channels = %u, but the filter writes %u channels (%s): leave "
			      "output.channels out or set it to %u",
			      c->path ? c->path : "config", c->output.channels, writes,
			      mix_out ? "the mixer's outputs" : "as many as input.channels", writes);
		gf_config_free(c);
		*out = NULL;
		return GF_E_CONFIG;
	}
	return 0;
}

uint32_t gf_reload_channels(const struct gf_config *c)
{
	return c->input.channels ? c->input.channels : GF_RELOAD_DEFAULT_CHANNELS;
}

uint32_t gf_reload_out_channels(const struct gf_config *c)
{
	return c->output.channels ? c->output.channels : gf_reload_channels(c);
}

void gf_reload_facts(const struct gf_config *c, int force_cpu, struct gf_chain_facts *f)
{
	*f = (struct gf_chain_facts){
		.mode = GF_CHAIN_LIVE,
		.rate = c->sample_rate,
		.channels = gf_reload_channels(c),
		.out_channels = gf_reload_out_channels(c),
		.backend = force_cpu ? GF_BACKEND_CPU : GF_BACKEND_AUTO,
		.gpu_index = -1,
	};
}

/* The reload's plan against the running chain, one line a stage, and whether it restarts. */
static int job_diff(const struct gf_reload_job *j, char *why, size_t len)
{
	struct gf_chain_diff d;
	int restart = gf_chain_diff(j->running, j->cfg, gf_reload_out_channels(j->cfg), &d);
	for (int s = 0; s < GF_CHAIN_STAGES; s++) {
		char line[500];
		gf_chain_diff_line(&d, (enum gf_chain_stage)s, line, sizeof(line));
		gf_info("reload: %s", line);
	}
	gf_chain_diff_why(&d, why, len);
	return restart;
}

void gf_reload_job_init(struct gf_reload_job *j, const struct gf_config_source *src,
			const struct gf_config *running, int engine_running, int force_cpu)
{
	memset(j, 0, sizeof(*j));
	j->src = src;
	j->running = running;
	j->engine_running = engine_running && running != NULL;
	j->force_cpu = force_cpu;
	atomic_init(&j->loaded, NULL);
}

static int job_fail(struct gf_reload_job *j, int err, const struct gf_errbuf *eb)
{
	j->err = err;
	j->r.outcome = GF_RELOAD_FAILED;
	j->r.err = err;
	snprintf(j->r.text, sizeof(j->r.text), "reload failed: %s", eb->msg[0] ? eb->msg : gf_strerror(err));
	return err;
}

/* The filter set of @p c, finite. */
static int job_filters(struct gf_reload_job *j, const struct gf_config *c, struct gf_errbuf *eb)
{
	struct gf_chain_facts f;
	gf_reload_facts(c, j->force_cpu, &f);
	int err = gf_chain_filters(c, &f, &j->fs, NULL, eb);
	if (!err)
		j->r.taps = j->fs->taps;
	return err;
}

/* The filters' response for the control page, drawn here on the build thread: its cost grows with
 * the filter (two FFTs per FIR at most, response.h; a mixer per output, at most
 * GF_RESPONSE_VIEW_PLOT_MAX curves, response_view.h) and must not fall on the control loop. Only
 * where a WebSocket can serve it; a failure costs the plot, not the reload. */
static void job_plot(struct gf_reload_job *j, const struct gf_config *c)
{
	if (c->control_port <= 0)
		return;
	const struct gf_filter_set *fs = j->fs;
	int err = gf_response_plot_set(NULL, &j->plot_svg, &j->plot_len, fs->coeffs, fs->channels, fs->taps,
				       fs->path_out, fs->outputs, c->sample_rate, c->path);
	if (!j->plot_svg)
		gf_warn("the response plot was not drawn: %s", gf_strerror(err));
}

/* Filters built: swap them in, or restart the stream. Decided only now: a
 * restart must not stop audio for a config whose filters do not build. */
static void job_decide(struct gf_reload_job *j)
{
	char why[400];
	if (!j->src) {
		j->r.outcome = GF_RELOAD_RESTART; /* an engine for the running config */
		snprintf(j->r.text, sizeof(j->r.text), "engine for the running config");
	} else if (!j->engine_running) {
		j->r.outcome = GF_RELOAD_RESTART;
		snprintf(j->r.text, sizeof(j->r.text), "stream restart needed: audio not running");
	} else if (job_diff(j, why, sizeof(why))) {
		j->r.outcome = GF_RELOAD_RESTART;
		snprintf(j->r.text, sizeof(j->r.text), "stream restart needed: %s", why);
	} else {
		j->r.outcome = GF_RELOAD_APPLIED;
	}
}

/* The engine, and the suppressor after it: on the GPU where the engine runs (suppress_bank.h), its
 * waits bounded by the engine's deadline. A bad noise file costs an engine built in vain, once. */
static int job_engine(struct gf_reload_job *j, const struct gf_config *c, struct gf_errbuf *eb)
{
	struct gf_chain_facts f;
	gf_reload_facts(c, j->force_cpu, &f);
	struct gf_engine_params p;
	gf_chain_engine_params(c, &f, j->fs->taps, &p);
	j->engine_cpu = j->force_cpu;
	int err = gf_engine_new(&j->engine, &p, j->fs, eb);
	if (err || j->suppress)
		return err;
	if ((err = gf_chain_suppressor(c, &f, j->engine, &j->suppress, eb)) != 0) {
		gf_engine_free(j->engine);
		j->engine = NULL;
	}
	return err;
}

int gf_reload_job_run(struct gf_reload_job *j)
{
	struct gf_errbuf eb = {{0}};
	int err;
	if (j->src && !j->cfg) {
		if ((err = gf_reload_load_config(j->src, &j->cfg, &eb)) != 0)
			return job_fail(j, err, &eb);
		/* From here the config is only read: the control thread may read it
		 * too (at start-up: the status socket's path, the log level). */
		atomic_store_explicit(&j->loaded, j->cfg, memory_order_release);
	}
	const struct gf_config *c = j->src ? j->cfg : j->running;
	if (!j->fs) {
		if ((err = job_filters(j, c, &eb)) != 0)
			return job_fail(j, err, &eb);
		job_plot(j, c);
		job_decide(j);
	}
	if (j->r.outcome == GF_RELOAD_RESTART && !j->engine && (err = job_engine(j, c, &eb)) != 0)
		return job_fail(j, err, &eb);
	return 0;
}

enum gf_reload_next gf_reload_job_next(struct gf_reload_job *j, int stream_running, int force_cpu)
{
	if (j->err)
		return GF_RELOAD_NEXT_REPORT;
	if (j->r.outcome == GF_RELOAD_APPLIED) {
		if (stream_running)
			return GF_RELOAD_NEXT_SWAP;
		/* The stream went away while the job ran (or its swap waited): the
		 * new config is applied as a restart, which needs an engine. */
		j->r.outcome = GF_RELOAD_RESTART;
		snprintf(j->r.text, sizeof(j->r.text), "stream restart needed: audio not running");
		j->swap_until_ms = 0;
	}
	if (j->engine && force_cpu && !j->engine_cpu) { /* a stuck worker forced the CPU meanwhile */
		gf_engine_free(j->engine);
		j->engine = NULL;
	}
	if (j->engine)
		return GF_RELOAD_NEXT_RESTART;
	j->force_cpu = force_cpu;
	return GF_RELOAD_NEXT_ENGINE;
}

int gf_reload_job_swap(struct gf_reload_job *j, struct gf_engine *e, int64_t now_ms)
{
	struct gf_errbuf eb = {{0}};
	/* APPLIED: the crossfade is the running config's (a change would restart). */
	if (!j->swap_until_ms)
		j->swap_until_ms = now_ms + (int64_t)j->cfg->crossfade_ms + GF_RELOAD_SWAP_GRACE_MS;
	gf_engine_reap(e); /* a finished crossfade's old filter: frees the swap slot */
	int err = gf_engine_swap(e, j->fs, &eb);
	if (err == GF_E_BUSY && now_ms < j->swap_until_ms)
		return 1;
	if (err == GF_E_TOOLONG && !eb.msg[0])
		gf_errbuf_set(&eb,
			      "%s: filter of %u taps exceeds max_taps; raise max_taps (restarts the stream)",
			      j->cfg->path ? j->cfg->path : "config", j->fs->taps);
	if (err) {
		job_fail(j, err, &eb);
		return 0;
	}
	snprintf(j->r.text, sizeof(j->r.text), "reloaded %s: %u taps",
		 j->cfg->path ? j->cfg->path : "built-in default", j->fs->taps);
	return 0;
}

void gf_reload_job_clear(struct gf_reload_job *j)
{
	gf_suppress_bank_free(j->suppress);
	j->suppress = NULL;
	gf_engine_free(j->engine);
	gf_filter_set_free(j->fs);
	gf_config_free(j->cfg);
	free(j->plot_svg);
	j->plot_svg = NULL;
	j->engine = NULL;
	j->fs = NULL;
	j->cfg = NULL;
}

const char *gf_reload_reason(const struct gf_reload_result *r)
{
	const char *pre = "reload failed: ";
	return strncmp(r->text, pre, strlen(pre)) == 0 ? r->text + strlen(pre) : r->text;
}
