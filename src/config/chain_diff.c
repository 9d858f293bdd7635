/*
 * A reload's plan (chain.h, gf_chain_diff): the running chain's config against
 * the new one, stage by stage, in the order audio crosses them. The one place
 * that says which setting needs the stream rebuilt, which stage is swapped in
 * with a crossfade and which runs on.
 */
#include <stdio.h>
#include <string.h>

#include "chain.h"

static int str_differs(const char *a, const char *b)
{
	if (!a || !b)
		return a != b;
	return strcmp(a, b) != 0;
}

/* Append @p text to @p why, after ", " where it holds something already. */
static void append(char *why, size_t len, const char *text)
{
	size_t used = strlen(why);
	if (used < len)
		snprintf(why + used, len - used, "%s%s", used ? ", " : "", text);
}

/* Append "what a -> b" to why. */
static void note(char *why, size_t len, const char *what, const char *a, const char *b)
{
	char text[300];
	snprintf(text, sizeof(text), "%s %s -> %s", what, a ? a : "default", b ? b : "default");
	append(why, len, text);
}

static void note_u(char *why, size_t len, const char *what, unsigned long a, unsigned long b)
{
	char sa[24], sb[24];
	snprintf(sa, sizeof(sa), "%lu", a);
	snprintf(sb, sizeof(sb), "%lu", b);
	note(why, len, what, sa, sb);
}

/* Append "what a unit -> b unit" to why. */
static void note_g(char *why, size_t len, const char *what, double a, double b, const char *unit)
{
	char sa[32], sb[32];
	snprintf(sa, sizeof(sa), "%g %s", a, unit);
	snprintf(sb, sizeof(sb), "%g %s", b, unit);
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

/* The stream's own settings: devices, rate, block, latency. */
static void diff_stream(const struct gf_config *a, const struct gf_config *b, char *why, size_t len)
{
	if (a->sample_rate != b->sample_rate)
		note_u(why, len, "sample rate", a->sample_rate, b->sample_rate);
	if (a->block_frames != b->block_frames)
		note_u(why, len, "block", a->block_frames, b->block_frames);
	diff_endpoint("input", &a->input, &b->input, why, len);
	diff_endpoint("output", &a->output, &b->output, why, len);
	if (a->latency_slack != b->latency_slack || a->latency_slack_auto != b->latency_slack_auto) {
		char sa[24], sb[24];
		snprintf(sa, sizeof(sa), a->latency_slack_auto ? "auto" : "%u", a->latency_slack);
		snprintf(sb, sizeof(sb), b->latency_slack_auto ? "auto" : "%u", b->latency_slack);
		note(why, len, "latency_slack", sa, sb);
	}
}

/* The engine's parameters (gf_chain_engine_params): a new filter alone is swapped in. */
static void diff_engine(const struct gf_config *a, const struct gf_config *b, char *why, size_t len)
{
	if (a->backend != b->backend)
		note_u(why, len, "backend", a->backend, b->backend);
	if (a->algo != b->algo)
		note_u(why, len, "algo", a->algo, b->algo);
	if (a->gpu_index != b->gpu_index)
		note_u(why, len, "gpu", (unsigned long)a->gpu_index, (unsigned long)b->gpu_index);
	if (a->gpu_path != b->gpu_path)
		note(why, len, "gpu_path", gf_gpu_path_name(a->gpu_path), gf_gpu_path_name(b->gpu_path));
	if (a->max_taps != b->max_taps)
		note_u(why, len, "max_taps", a->max_taps, b->max_taps);
	if (a->gpu_deadline_ms != b->gpu_deadline_ms)
		note_g(why, len, "gpu_deadline", a->gpu_deadline_ms, b->gpu_deadline_ms, "ms");
	if (a->crossfade_ms != b->crossfade_ms)
		note_g(why, len, "crossfade", a->crossfade_ms, b->crossfade_ms, "ms");
}

/* What the running suppressors take live from the new config (daemon_suppress.c). */
static void diff_suppressor_live(const struct gf_config *a, const struct gf_config *b, uint32_t channels,
				 char *why, size_t len)
{
	int live = gf_config_suppress_live_differs(a, b, channels);
	if (live & GF_SUPPRESS_LIVE_DEPTH)
		append(why, len, "reduction_db follows the new config");
	if (live & GF_SUPPRESS_LIVE_BYPASS)
		append(why, len, "bypass follows the new config");
	if (live & GF_NEURAL_LIVE_ATTEN)
		append(why, len, "the neural stage's atten_lim_db follows the new config");
	if (live & GF_NEURAL_LIVE_BYPASS)
		append(why, len, "the neural stage's bypass follows the new config");
}

int gf_chain_diff(const struct gf_config *a, const struct gf_config *b, uint32_t out_channels,
		  struct gf_chain_diff *d)
{
	memset(d, 0, sizeof(*d));
	size_t len = sizeof(d->why[0]);
	diff_stream(a, b, d->why[GF_CHAIN_STREAM], len);
	diff_engine(a, b, d->why[GF_CHAIN_FILTERS], len);
	/* The suppressor's state belongs to the stream it runs in: a new one
	 * comes with a new stream, as a new device or block size does. */
	if (!gf_config_suppress_differs(a, b, out_channels, d->why[GF_CHAIN_SUPPRESSOR], len))
		diff_suppressor_live(a, b, out_channels, d->why[GF_CHAIN_SUPPRESSOR], len);
	else
		d->cause[GF_CHAIN_SUPPRESSOR] = 1;
	if (a->volume_db != b->volume_db) /* a request to the running stage (daemon_control.c) */
		note_g(d->why[GF_CHAIN_GAIN], len, "volume_db (a request)", a->volume_db, b->volume_db, "dB");
	d->cause[GF_CHAIN_STREAM] = d->why[GF_CHAIN_STREAM][0] != '\0';
	d->cause[GF_CHAIN_FILTERS] = d->why[GF_CHAIN_FILTERS][0] != '\0';
	d->action[GF_CHAIN_FILTERS] = GF_CHAIN_SWAP;
	int restart = 0;
	for (int s = 0; s < GF_CHAIN_STAGES; s++)
		restart |= d->cause[s];
	/* A restarted stream runs a chain built anew: the engine and the suppressor the job made,
	 * a gain stage at the volume in force. */
	for (int s = 0; restart && s < GF_CHAIN_STAGES; s++)
		d->action[s] = GF_CHAIN_RESTART;
	return restart;
}

void gf_chain_diff_why(const struct gf_chain_diff *d, char *why, size_t len)
{
	why[0] = '\0';
	for (int s = 0; s < GF_CHAIN_STAGES; s++)
		if (d->cause[s])
			append(why, len, d->why[s]);
}

const char *gf_chain_stage_name(enum gf_chain_stage s)
{
	static const char *const names[GF_CHAIN_STAGES] = {"stream", "filters", "suppressor", "gain"};
	return (unsigned)s < GF_CHAIN_STAGES ? names[s] : "?";
}

const char *gf_chain_action_name(enum gf_chain_action a)
{
	static const char *const names[] = {"keep", "swap", "restart"};
	return (unsigned)a <= GF_CHAIN_RESTART ? names[a] : "?";
}

void gf_chain_diff_line(const struct gf_chain_diff *d, enum gf_chain_stage s, char *line, size_t len)
{
	char why[sizeof(d->why[0])] = "";
	if (d->action[s] != GF_CHAIN_RESTART || d->cause[s]) {
		snprintf(why, sizeof(why), "%s", d->why[s]);
	} else if (s != GF_CHAIN_STREAM) {
		snprintf(why, sizeof(why), "with the stream");
	} else { /* rebuilt for the stages whose settings need it */
		for (int k = 0; k < GF_CHAIN_STAGES; k++)
			if (d->cause[k])
				append(why, sizeof(why), gf_chain_stage_name((enum gf_chain_stage)k));
	}
	int for_others = s == GF_CHAIN_STREAM && d->action[s] == GF_CHAIN_RESTART && !d->cause[s];
	snprintf(line, len, "%s: %s%s%s%s", gf_chain_stage_name(s), gf_chain_action_name(d->action[s]),
		 why[0] ? (for_others ? " (for the " : " (") : "", why, why[0] ? ")" : "");
}
