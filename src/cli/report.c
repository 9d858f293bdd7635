/*
 * --check-config's filter report: per channel what the final FIR does to
 * level and time, and whether it can clip. The peak of |H| is what a
 * full-scale sine can reach; sum |h| is what any full-scale input can reach
 * (the worst case, an input that matches the taps' signs). A mixer is
 * reported per output, bounded whatever its number of paths (response_view.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "response.h"
#include "response_view.h"
#include "neural_bank.h"
#include "suppress_bank.h"
#include "tools.h"

static double db(double x)
{
	return 20.0 * log10(x);
}

/* "+1.23 dB" or "-inf dB" */
static const char *fmt_db(char *buf, size_t size, double x)
{
	if (x > 0.0)
		snprintf(buf, size, "%+.2f dB", db(x));
	else
		snprintf(buf, size, "-inf dB");
	return buf;
}

/* "channel 0:", the start of a FIR's line (padded by the caller). */
static const char *fmt_label(char *buf, size_t size, const char *what, uint32_t n)
{
	snprintf(buf, size, "%s %u:", what, n);
	return buf;
}

/* "channel 0:    DC ...": @p what and @p n name the FIR ("channel", or a mixer's "output"). */
static void print_stats(FILE *out, const char *what, uint32_t n, const struct gf_response_stats *st,
			double rate)
{
	char a[32], b[32], d[32], label[32];
	fprintf(out, "  %-13s DC %s (%.6g), peak %s at %.1f Hz, worst case %s (sum |h| = %.6g)",
		fmt_label(label, sizeof(label), what, n), fmt_db(a, sizeof(a), fabs(st->dc_gain)),
		st->dc_gain, fmt_db(b, sizeof(b), st->peak_gain), st->peak_hz,
		fmt_db(d, sizeof(d), st->abs_sum), st->abs_sum);
	if (isfinite(st->delay_samples))
		fprintf(out, ", passband delay %.1f samples (%.3f ms)\n", st->delay_samples,
			1000.0 * st->delay_samples / rate);
	else
		fprintf(out, ", passband delay undefined (the filter is all zeros)\n");
}

/* Above 0 dB a full-scale sine at the peak clips: say which gain_db removes the risk. */
static void print_warning(FILE *out, const char *what, uint32_t n, const struct gf_response_stats *st)
{
	double peak_db = db(st->peak_gain), worst_db = db(st->abs_sum);
	if (!(st->peak_gain > 1.0 && peak_db > 0.005))
		return;
	/* rounded up to 0.1 dB so that the suggested value really is enough */
	double fix = -ceil(peak_db * 10.0) / 10.0, fix_all = -ceil(worst_db * 10.0) / 10.0;
	/* a mixer's output has no gain_db of its own: its paths' gains move together */
	int output = strcmp(what, "output") == 0;
	const char *by = output ? "its paths' gain_db lowered by" : "gain_db =";
	double sign = output ? -1.0 : 1.0;
	fprintf(out,
		"  warning:      %s %u can clip: its gain peaks at %+.2f dB; %s %.1f keeps "
		"a full-scale sine below 0 dBFS, %s %.1f any full-scale signal\n",
		what, n, peak_db, by, sign * fix, by, sign * fix_all);
}

/* An output whose sum is past the analysed ones: the figures that cost one pass over its taps. */
static void print_output_cheap(FILE *out, const struct gf_response_view *v, uint32_t o)
{
	const float *h = v->sums + (size_t)v->of_output[o] * v->taps;
	double dc = 0.0;
	char a[32], d[32], label[32];
	for (uint32_t k = 0; k < v->taps; k++)
		dc += h[k];
	fmt_label(label, sizeof(label), "output", o);
	fprintf(out,
		"  %-13s DC %s (%.6g), worst case %s (sum |h| = %.6g); peak and delay not computed "
		"(only the first %u distinct sums are)\n",
		label, fmt_db(a, sizeof(a), fabs(dc)), dc, fmt_db(d, sizeof(d), v->abs_sum[o]), v->abs_sum[o],
		GF_RESPONSE_VIEW_STATS_MAX);
}

/*
 * A mixer, per output: the sum of its paths (what it gives when every input carries the same
 * signal) and its worst case (the paths' sum |h| added). Outputs of identical sums share one
 * analysis, and at most GF_RESPONSE_VIEW_STATS_MAX are analysed: the cost is bounded whatever
 * the number of paths (response_view.h).
 */
static void print_mixer(FILE *out, const struct gf_filter_set *fs, const struct gf_response_view *view,
			uint32_t rate)
{
	struct gf_response_stats *st = view ? calloc(GF_RESPONSE_VIEW_STATS_MAX, sizeof(*st)) : NULL;
	if (!st) {
		fprintf(out, "  mixer:        (not enough memory for the response)\n");
		return;
	}
	const struct gf_response_view *v = view;
	uint32_t n = v->n_distinct < GF_RESPONSE_VIEW_STATS_MAX ? v->n_distinct : GF_RESPONSE_VIEW_STATS_MAX;
	for (uint32_t d = 0; d < n; d++)
		if (gf_response_stats(v->sums + (size_t)d * v->taps, v->taps, rate, &st[d]))
			st[d].peak_gain = NAN; /* not enough memory: the cheap figures instead */
	fprintf(out,
		"  mixer:        %u paths into %u outputs; per output, the sum of its paths (every input "
		"the same signal): %u distinct\n",
		fs->channels, fs->outputs, v->n_distinct);
	for (uint32_t o = 0; o < v->outputs; o++) {
		uint32_t d = v->of_output[o];
		if (!v->n_firs[o]) {
			char label[32];
			fprintf(out, "  %-13s no path: silence\n",
				fmt_label(label, sizeof(label), "output", o));
		} else if (d < n && !isnan(st[d].peak_gain)) {
			struct gf_response_stats s = st[d];
			s.abs_sum = v->abs_sum[o];
			print_stats(out, "output", o, &s, rate);
			print_warning(out, "output", o, &s);
		} else {
			print_output_cheap(out, v, o);
		}
	}
	free(st);
}

void gf_tool_print_report(FILE *out, const struct gf_filter_set *fs, const struct gf_response_view *view,
			  uint32_t rate)
{
	if (gf_filter_set_is_mixer(fs)) {
		print_mixer(out, fs, view, rate);
		return;
	}
	for (uint32_t c = 0; c < fs->channels; c++) {
		struct gf_response_stats st;
		if (gf_response_stats(gf_filter_set_channel(fs, c), fs->taps, rate, &st)) {
			fprintf(out, "  channel %u:    (not enough memory for the response)\n", c);
			continue;
		}
		print_stats(out, "channel", c, &st, rate);
		print_warning(out, "channel", c, &st);
	}
}

/* 1 where channel @p c has the stage asked for: the suppressor, or (@p neural) the neural stage. */
static int has_stage(const struct gf_config *cfg, uint32_t c, int neural)
{
	struct gf_config_suppress s;
	struct gf_config_neural n;
	return neural ? gf_config_neural_of(cfg, c, &n) : gf_config_suppress_of(cfg, c, &s);
}

/* Which channels have the stage: "all channels", "channel 0", "channels 0, 2". */
static void print_channels(FILE *out, const struct gf_config *cfg, uint32_t channels, int neural)
{
	uint32_t n = 0;
	for (uint32_t c = 0; c < channels; c++)
		n += (uint32_t)has_stage(cfg, c, neural);
	if (n == channels && channels > 1) {
		fprintf(out, "all channels");
		return;
	}
	fprintf(out, "channel%s", n == 1 ? "" : "s");
	const char *sep = " ";
	for (uint32_t c = 0; c < channels; c++) {
		if (has_stage(cfg, c, neural)) {
			fprintf(out, "%s%u", sep, c);
			sep = ", ";
		}
	}
}

static void print_suppress(FILE *out, const struct gf_config *cfg, const struct gf_config_suppress *s,
			   uint32_t lag, uint32_t channels, uint32_t rate)
{
	char hp[64] = "";
	if (s->highpass_hz > 0.0)
		snprintf(hp, sizeof(hp), ", zero-phase high-pass at %g Hz", s->highpass_hz);
	fprintf(out,
		"  suppressor:   %s (design = \"suppress\", reduction up to %.1f dB%s, noise estimate from "
		"%s) "
		"on ",
		s->name, s->reduction_db, hp, s->noise ? s->noise : "the audio itself");
	print_channels(out, cfg, channels, 0);
	fprintf(out, ", after the FIR; adds %u frames (%.2f ms) of latency\n", lag, 1000.0 * lag / rate);
}

static void print_neural(FILE *out, const struct gf_config *cfg, const struct gf_neural_bank *nb,
			 int after_suppressor, uint32_t channels, uint32_t rate)
{
	struct gf_config_neural nc = {0};
	for (uint32_t c = 0; c < channels && !nc.name; c++)
		gf_config_neural_of(cfg, c, &nc);
	if (!nc.name)
		return;
	uint32_t lag = gf_neural_bank_latency(nb);
	fprintf(out,
		"  neural stage: %s (design = \"deepfilter\", DeepFilterNet3 from %s, attenuation limit "
		"%.1f dB, post-filter %s, %s%s) on ",
		nc.name, nc.model, nc.atten_lim_db, nc.post_filter_beta > 0.0 ? "on" : "off",
		gf_neural_bank_backend(nb), nc.bypass ? ", bypassed" : "");
	print_channels(out, cfg, channels, 1);
	fprintf(out, ", after the FIR%s; adds %u frames (%.2f ms) of latency\n",
		after_suppressor ? " and the suppressor" : "", lag, 1000.0 * lag / rate);
}

void gf_tool_print_suppressor(FILE *out, const struct gf_config *cfg, const struct gf_suppress_bank *bank,
			      uint32_t channels, uint32_t rate)
{
	if (!bank)
		return;
	struct gf_config_suppress first = {0};
	for (uint32_t c = 0; c < channels && !first.name; c++)
		gf_config_suppress_of(cfg, c, &first);
	if (first.name)
		print_suppress(out, cfg, &first, gf_suppress_bank_suppressor_latency(bank), channels, rate);
	if (gf_suppress_bank_neural(bank))
		print_neural(out, cfg, gf_suppress_bank_neural(bank), first.name != NULL, channels, rate);
}
