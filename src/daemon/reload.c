#include "reload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "filter_set.h"
#include "log.h"

int gf_reload_load_config(const struct gf_config_source *src, struct gf_config **out, struct gf_errbuf *eb)
{
	int err = gf_config_load_source(src, out, eb);
	if (err)
		return err;
	struct gf_config *c = *out;
	/* Explicit live defaults, so that "unset" and "set to the default" compare equal. */
	if (c->sample_rate == 0)
		c->sample_rate = GF_RELOAD_DEFAULT_RATE;
	if (c->input.channels == 0)
		c->input.channels = GF_RELOAD_DEFAULT_CHANNELS;
	return 0;
}

uint32_t gf_reload_channels(const struct gf_config *c)
{
	return c->input.channels ? c->input.channels : GF_RELOAD_DEFAULT_CHANNELS;
}

void gf_reload_engine_params(const struct gf_config *c, uint32_t taps, struct gf_engine_params *p)
{
	memset(p, 0, sizeof(*p));
	p->backend = c->backend;
	p->algo = c->algo;
	p->channels = gf_reload_channels(c);
	p->max_block = c->block_frames;
	p->max_taps = c->max_taps			  ? c->max_taps
		      : taps > GF_RELOAD_DEFAULT_MAX_TAPS ? taps
							  : GF_RELOAD_DEFAULT_MAX_TAPS;
	p->crossfade_frames = (uint32_t)lround(c->crossfade_ms * c->sample_rate / 1000.0);
	p->gpu_index = c->gpu_index;
	p->deadline_us = gf_reload_deadline_us(c);
}

uint32_t gf_reload_deadline_us(const struct gf_config *c)
{
	if (c->gpu_deadline_ms > 0)
		return (uint32_t)lround(c->gpu_deadline_ms * 1000.0);
	uint32_t rate = c->sample_rate ? c->sample_rate : GF_RELOAD_DEFAULT_RATE;
	/* Two block periods: one is the block's own budget, the second the slack
	 * a late block may still use before it costs an underrun. */
	uint64_t us = 2000000ull * c->block_frames / rate;
	return us > 0 ? (uint32_t)us : 1;
}

static int str_differs(const char *a, const char *b)
{
	if (!a || !b)
		return a != b;
	return strcmp(a, b) != 0;
}

/* Append "what a -> b" to why. */
static void note(char *why, size_t len, const char *what, const char *a, const char *b)
{
	size_t used = strlen(why);
	if (used < len)
		snprintf(why + used, len - used, "%s%s %s -> %s", used ? ", " : "", what, a ? a : "default",
			 b ? b : "default");
}

static void note_u(char *why, size_t len, const char *what, unsigned long a, unsigned long b)
{
	char sa[24], sb[24];
	snprintf(sa, sizeof(sa), "%lu", a);
	snprintf(sb, sizeof(sb), "%lu", b);
	note(why, len, what, sa, sb);
}

static void diff_endpoint(const char *side, const struct gf_audio_endpoint *a,
			  const struct gf_audio_endpoint *b, char *why, size_t len)
{
	char what[32];
	if (str_differs(a->device, b->device)) {
		snprintf(what, sizeof(what), "%s device", side);
		note(why, len, what, a->device, b->device);
	}
	if (str_differs(a->host_api, b->host_api)) {
		snprintf(what, sizeof(what), "%s host API", side);
		note(why, len, what, a->host_api, b->host_api);
	}
	if (a->channels != b->channels) {
		snprintf(what, sizeof(what), "%s channels", side);
		note_u(why, len, what, a->channels, b->channels);
	}
	if (str_differs(a->file, b->file)) {
		snprintf(what, sizeof(what), "%s file", side);
		note(why, len, what, a->file, b->file);
	}
}

int gf_reload_needs_restart(const struct gf_config *a, const struct gf_config *b, char *why, size_t len)
{
	why[0] = '\0';
	if (a->sample_rate != b->sample_rate)
		note_u(why, len, "sample rate", a->sample_rate, b->sample_rate);
	if (a->block_frames != b->block_frames)
		note_u(why, len, "block", a->block_frames, b->block_frames);
	diff_endpoint("input", &a->input, &b->input, why, len);
	diff_endpoint("output", &a->output, &b->output, why, len);
	if (a->backend != b->backend)
		note_u(why, len, "backend", a->backend, b->backend);
	if (a->algo != b->algo)
		note_u(why, len, "algo", a->algo, b->algo);
	if (a->gpu_index != b->gpu_index)
		note_u(why, len, "gpu", (unsigned long)a->gpu_index, (unsigned long)b->gpu_index);
	if (a->max_taps != b->max_taps)
		note_u(why, len, "max_taps", a->max_taps, b->max_taps);
	if (a->latency_slack != b->latency_slack || a->latency_slack_auto != b->latency_slack_auto) {
		char sa[24], sb[24];
		snprintf(sa, sizeof(sa), a->latency_slack_auto ? "auto" : "%u", a->latency_slack);
		snprintf(sb, sizeof(sb), b->latency_slack_auto ? "auto" : "%u", b->latency_slack);
		note(why, len, "latency_slack", sa, sb);
	}
	if (a->gpu_deadline_ms != b->gpu_deadline_ms) {
		char sa[32], sb[32];
		snprintf(sa, sizeof(sa), "%g ms", a->gpu_deadline_ms);
		snprintf(sb, sizeof(sb), "%g ms", b->gpu_deadline_ms);
		note(why, len, "gpu_deadline", sa, sb);
	}
	if (a->crossfade_ms != b->crossfade_ms) {
		char sa[32], sb[32];
		snprintf(sa, sizeof(sa), "%g ms", a->crossfade_ms);
		snprintf(sb, sizeof(sb), "%g ms", b->crossfade_ms);
		note(why, len, "crossfade", sa, sb);
	}
	return why[0] != '\0';
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Swap, waiting out a previous swap still crossfading (GF_E_BUSY). */
static int swap_with_retry(struct gf_engine *e, const struct gf_filter_set *fs, uint32_t busy_wait_ms,
			   struct gf_errbuf *eb)
{
	uint32_t waited = 0;
	for (;;) {
		gf_engine_reap(e);
		int err = gf_engine_swap(e, fs, eb);
		if (err != GF_E_BUSY || waited >= busy_wait_ms)
			return err;
		sleep_ms(2);
		waited += 2;
	}
}

static int fail(struct gf_reload_result *r, int err, const struct gf_errbuf *eb)
{
	r->outcome = GF_RELOAD_FAILED;
	r->err = err;
	snprintf(r->text, sizeof(r->text), "reload failed: %s", eb->msg[0] ? eb->msg : gf_strerror(err));
	return err;
}

int gf_reload_build(const struct gf_config *c, const struct gf_config *running, int engine_running,
		    struct gf_filter_set **fs_out, struct gf_reload_result *r)
{
	struct gf_errbuf eb = {{0}};
	struct gf_filter_set *fs = NULL;
	char why[400];
	memset(r, 0, sizeof(*r));
	*fs_out = NULL;
	/* Build before deciding anything: a restart must not stop audio for a config
	 * whose filters turn out not to build. */
	int err = gf_config_build(c, c->sample_rate, gf_reload_channels(c), &fs, &eb);
	if (!err && gf_filter_set_check_finite(fs) != 0) {
		err = GF_E_NONFINITE;
		gf_errbuf_set(&eb, "%s: filter has NaN or Inf coefficients", c->path ? c->path : "config");
	}
	if (err) {
		gf_filter_set_free(fs);
		return fail(r, err, &eb);
	}
	r->taps = fs->taps;
	if (!engine_running) {
		r->outcome = GF_RELOAD_RESTART;
		snprintf(r->text, sizeof(r->text), "stream restart needed: audio not running");
	} else if (gf_reload_needs_restart(running, c, why, sizeof(why))) {
		r->outcome = GF_RELOAD_RESTART;
		snprintf(r->text, sizeof(r->text), "stream restart needed: %s", why);
	} else {
		r->outcome = GF_RELOAD_APPLIED;
	}
	*fs_out = fs;
	return 0;
}

int gf_reload_prepare(const struct gf_config_source *src, const struct gf_config *running, int engine_running,
		      struct gf_config **next, struct gf_filter_set **fs, struct gf_reload_result *r)
{
	struct gf_errbuf eb = {{0}};
	struct gf_config *c = NULL;
	memset(r, 0, sizeof(*r));
	*next = NULL;
	*fs = NULL;
	int err = gf_reload_load_config(src, &c, &eb);
	if (err)
		return fail(r, err, &eb);
	err = gf_reload_build(c, running, engine_running, fs, r);
	if (err) {
		gf_config_free(c);
		return err;
	}
	*next = c;
	return 0;
}

int gf_reload_swap(struct gf_engine *e, const struct gf_config *next, const struct gf_filter_set *fs,
		   uint32_t busy_wait_ms, struct gf_reload_result *r)
{
	struct gf_errbuf eb = {{0}};
	int err = swap_with_retry(e, fs, busy_wait_ms, &eb);
	if (err == GF_E_TOOLONG && !eb.msg[0])
		gf_errbuf_set(&eb,
			      "%s: filter of %u taps exceeds max_taps; raise max_taps (restarts the stream)",
			      next->path ? next->path : "config", fs->taps);
	if (err)
		return fail(r, err, &eb);
	r->outcome = GF_RELOAD_APPLIED;
	r->taps = fs->taps;
	snprintf(r->text, sizeof(r->text), "reloaded %s: %u taps",
		 next->path ? next->path : "built-in default", fs->taps);
	return 0;
}

int gf_reload(const struct gf_config_source *src, const struct gf_config *running, struct gf_engine *e,
	      uint32_t busy_wait_ms, struct gf_config **next, struct gf_reload_result *r)
{
	struct gf_filter_set *fs = NULL;
	int err = gf_reload_prepare(src, running, e != NULL, next, &fs, r);
	if (!err && r->outcome == GF_RELOAD_APPLIED)
		err = gf_reload_swap(e, *next, fs, busy_wait_ms, r);
	gf_filter_set_free(fs);
	if (err) {
		gf_config_free(*next);
		*next = NULL;
	}
	return err;
}
