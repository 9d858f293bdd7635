/*
 * --check-config's filter report: per channel what the final FIR does to
 * level and time, and whether it can clip. The peak of |H| is what a
 * full-scale sine can reach; sum |h| is what any full-scale input can reach
 * (the worst case, an input that matches the taps' signs).
 */
#include <math.h>
#include <stdio.h>

#include "response.h"
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

static void print_channel(FILE *out, uint32_t c, const struct gf_response_stats *st, double rate)
{
	char a[32], b[32], d[32];
	fprintf(out, "  channel %u:    DC %s (%.6g), peak %s at %.1f Hz, worst case %s (sum |h| = %.6g)", c,
		fmt_db(a, sizeof(a), fabs(st->dc_gain)), st->dc_gain, fmt_db(b, sizeof(b), st->peak_gain),
		st->peak_hz, fmt_db(d, sizeof(d), st->abs_sum), st->abs_sum);
	if (isfinite(st->delay_samples))
		fprintf(out, ", passband delay %.1f samples (%.3f ms)\n", st->delay_samples,
			1000.0 * st->delay_samples / rate);
	else
		fprintf(out, ", passband delay undefined (the filter is all zeros)\n");
}

/* Above 0 dB a full-scale sine at the peak clips: say which gain_db removes the risk. */
static void print_warning(FILE *out, uint32_t c, const struct gf_response_stats *st)
{
	double peak_db = db(st->peak_gain), worst_db = db(st->abs_sum);
	/* rounded up to 0.1 dB so that the suggested value really is enough */
	double fix = -ceil(peak_db * 10.0) / 10.0, fix_all = -ceil(worst_db * 10.0) / 10.0;
	fprintf(out,
		"  warning:      channel %u can clip: its gain peaks at %+.2f dB; gain_db = %.1f keeps "
		"a full-scale sine below 0 dBFS, gain_db = %.1f any full-scale signal\n",
		c, peak_db, fix, fix_all);
}

void gf_tool_print_report(FILE *out, const struct gf_filter_set *fs, uint32_t rate)
{
	for (uint32_t c = 0; c < fs->channels; c++) {
		struct gf_response_stats st;
		if (gf_response_stats(gf_filter_set_channel(fs, c), fs->taps, rate, &st)) {
			fprintf(out, "  channel %u:    (not enough memory for the response)\n", c);
			continue;
		}
		print_channel(out, c, &st, rate);
		if (st.peak_gain > 1.0 && db(st.peak_gain) > 0.005)
			print_warning(out, c, &st);
	}
}

/* Which channels: "all channels", "channel 0", "channels 0, 2". */
static void print_channels(FILE *out, const struct gf_config *cfg, uint32_t channels)
{
	struct gf_config_suppress s;
	uint32_t n = 0;
	for (uint32_t c = 0; c < channels; c++)
		n += (uint32_t)gf_config_suppress_of(cfg, c, &s);
	if (n == channels && channels > 1) {
		fprintf(out, "all channels");
		return;
	}
	fprintf(out, "channel%s", n == 1 ? "" : "s");
	const char *sep = " ";
	for (uint32_t c = 0; c < channels; c++) {
		if (gf_config_suppress_of(cfg, c, &s)) {
			fprintf(out, "%s%u", sep, c);
			sep = ", ";
		}
	}
}

void gf_tool_print_suppressor(FILE *out, const struct gf_config *cfg, const struct gf_suppress_bank *bank,
			      uint32_t channels, uint32_t rate)
{
	if (!bank)
		return;
	struct gf_config_suppress first = {0};
	for (uint32_t c = 0; c < channels && !first.name; c++)
		gf_config_suppress_of(cfg, c, &first);
	uint32_t lag = gf_suppress_bank_latency(bank);
	char hp[64] = "";
	if (first.highpass_hz > 0.0)
		snprintf(hp, sizeof(hp), ", zero-phase high-pass at %g Hz", first.highpass_hz);
	fprintf(out,
		"  suppressor:   %s (design = \"suppress\", reduction up to %.1f dB%s, noise estimate from "
		"%s) "
		"on ",
		first.name, first.reduction_db, hp, first.noise ? first.noise : "the audio itself");
	print_channels(out, cfg, channels);
	fprintf(out, ", after the FIR; adds %u frames (%.2f ms) of latency\n", lag, 1000.0 * lag / rate);
}
