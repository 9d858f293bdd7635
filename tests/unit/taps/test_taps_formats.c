/*
 * Impulse-response formats that room-correction tools write: raw
 * little-endian float32/float64 (DRC-FIR .pcm, rePhase .dbl) and 16/24/32-bit
 * integers, each loaded through a config and compared with the same taps in
 * text; sizes that are not whole samples; 64-bit float WAV (Acourate); a
 * multi-channel WAV taken per route (channel = "route").
 */
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "taps_io.h"
#include "testutil.h"

#define N_TAPS 301

static char *dir;

/* Little-endian bytes of @p v, @p bytes long. */
static void put_le(unsigned char *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/*
 * Taps that @p fmt holds exactly (decaying noise, with full-scale extremes),
 * their raw image into @p img, and the exact values into @p want.
 */
static size_t make_raw(enum gf_raw_format fmt, uint64_t *seed, unsigned char *img, double *want)
{
	unsigned ss = gf_taps_raw_size(fmt);
	for (uint32_t k = 0; k < N_TAPS; k++) {
		double x = gf_test_randf(seed) * exp(-(double)k / 60.0);
		if (k == 7)
			x = -1.0; /* the most negative integer code */
		unsigned char *p = img + (size_t)k * ss;
		switch (fmt) {
		case GF_RAW_FLOAT32LE: {
			float f = (float)(x * 3.0); /* floats may exceed full scale */
			uint32_t u;
			memcpy(&u, &f, 4);
			put_le(p, u, 4);
			want[k] = f;
			break;
		}
		case GF_RAW_FLOAT64LE: {
			double d = x * 3.0 + 1e-12; /* not a float */
			uint64_t u;
			memcpy(&u, &d, 8);
			put_le(p, u, 8);
			want[k] = d;
			break;
		}
		default: {
			int bits = fmt == GF_RAW_S16LE ? 16 : fmt == GF_RAW_S32LE ? 32 : 24;
			double scale = ldexp(1.0, bits - 1);
			int64_t v = (int64_t)llround(x * scale);
			if (v >= (int64_t)scale)
				v = (int64_t)scale - 1;
			if (fmt == GF_RAW_S24LE4LJ) /* the high 3 bytes; the low one is padding */
				put_le(p, (uint64_t)v << 8, ss);
			else /* S24LE: the 4th byte is the sign extension */
				put_le(p, (uint64_t)v, ss);
			want[k] = (double)v / scale;
		}
		}
	}
	return (size_t)N_TAPS * ss;
}

static char *text_of(const double *h, uint32_t n)
{
	char *s = malloc((size_t)n * 32 + 1), *p = s;
	for (uint32_t i = 0; i < n; i++)
		p += sprintf(p, "%.17g\n", h[i]);
	return s;
}

static struct gf_filter_set *build_conf(const char *text, struct gf_errbuf *eb, int *err)
{
	struct gf_config *c = NULL;
	struct gf_filter_set *fs = NULL;
	*err = gf_config_load_string(text, dir, &c, eb);
	if (!*err)
		*err = gf_config_build(c, 48000, 2, &fs, eb);
	gf_config_free(c);
	return fs;
}

static void test_raw_round_trips(void)
{
	static const enum gf_raw_format fmts[] = {GF_RAW_FLOAT32LE, GF_RAW_FLOAT64LE, GF_RAW_S16LE,
						  GF_RAW_S24LE3,    GF_RAW_S24LE,     GF_RAW_S32LE,
						  GF_RAW_S24LE4LJ};
	uint64_t seed = gf_test_seed("taps_formats");
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		const char *name = gf_taps_raw_name(fmts[i]);
		unsigned char img[N_TAPS * 8];
		double want[N_TAPS];
		size_t size = make_raw(fmts[i], &seed, img, want);
		char fname[64];
		snprintf(fname, sizeof(fname), "ir-%s.raw", name);
		char *raw = gf_test_path(dir, fname);
		gf_test_write_file(raw, img, size);
		char *txt = text_of(want, N_TAPS);
		free(gf_test_write_text_in(dir, "ir.txt", txt));
		free(txt);

		/* the reader: exact values */
		double *h;
		uint32_t n;
		struct gf_errbuf eb = {{0}};
		struct gf_ir_select sel = {0};
		CHECK_OK_EB(gf_taps_read_raw(raw, fmts[i], &sel, &h, &n, &eb), &eb);
		CHECK(n == N_TAPS);
		for (uint32_t k = 0; k < n; k++)
			CHECK(h[k] == want[k]);
		free(h);

		/* through a config (the name in any case), against the text file, with offset and length */
		char lower[16] = "";
		for (size_t j = 0; name[j] && j + 1 < sizeof(lower); j++)
			lower[j] = (char)(name[j] >= 'A' && name[j] <= 'Z' ? name[j] - 'A' + 'a' : name[j]);
		char conf[1024];
		snprintf(conf, sizeof(conf),
			 "filters = ( { name = \"raw\"; file = \"%s\"; format = \"%s\"; offset = 5; length = "
			 "200; },\n"
			 "            { name = \"txt\"; file = \"ir.txt\"; } );\n"
			 "routes = ( { channel = 0; chain = [\"raw\"]; }, { channel = 1; chain = [\"txt\"]; "
			 "} );\n",
			 fname, i % 2 ? name : lower);
		int err;
		struct gf_filter_set *fs = build_conf(conf, &eb, &err);
		CHECK_OK_EB(err, &eb);
		CHECK(fs->taps == N_TAPS);
		const float *a = gf_filter_set_channel(fs, 0), *b = gf_filter_set_channel(fs, 1);
		for (uint32_t k = 0; k < 200; k++)
			CHECK(a[k] == b[k + 5]);
		printf("  %s: %zu bytes, %u taps read exactly, offset/length as text\n", name, size, N_TAPS);
		gf_filter_set_free(fs);

		/* one byte short: an error that names the file and the format */
		if (gf_taps_raw_size(fmts[i]) > 1) {
			gf_test_write_file(raw, img, size - 1);
			fs = build_conf(conf, &eb, &err);
			printf("  expected error: %s\n", eb.msg);
			CHECK(err == GF_E_CONFIG && !fs);
			CHECK(strstr(eb.msg, raw) && strstr(eb.msg, "not a whole number") &&
			      strstr(eb.msg, name));
		}
		free(raw);
	}
}

/*
 * CamillaDSP's names, v4's (ALSA style) beside the older ones: known bytes,
 * two samples each (the stride), decode to known values.
 */
static void test_raw_names_known_bytes(void)
{
	static const struct {
		const char *name;
		unsigned size;
		unsigned char bytes[16];
		double want[2];
	} cases[] = {
		{"S16_LE", 2, {0x00, 0x80, 0x00, 0x40}, {-1.0, 0.5}},
		{"S16LE", 2, {0xff, 0x7f, 0x01, 0x00}, {32767.0 / 32768, 1.0 / 32768}},
		{"S24_3_LE", 3, {0x00, 0x00, 0xc0, 0x01, 0x00, 0x00}, {-0.5, 1.0 / 8388608}},
		{"S24LE3", 3, {0xff, 0xff, 0xff, 0x00, 0x00, 0x80}, {-1.0 / 8388608, -1.0}},
		/* right-justified: the low 3 bytes hold the value, the high one is padding */
		{"S24_4_RJ_LE", 4, {0x00, 0x00, 0xc0, 0x00, 0x00, 0x00, 0x40, 0x00}, {-0.5, 0.5}},
		{"S24LE",
		 4,
		 {0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00, 0x00},
		 {-1.0 / 8388608, 1.0 / 8388608}},
		/* left-justified: the high 3 bytes hold the value, the low one is padding */
		{"S24_4_LJ_LE", 4, {0x00, 0x00, 0x00, 0xc0, 0x00, 0x01, 0x00, 0x00}, {-0.5, 1.0 / 8388608}},
		{"S32_LE", 4, {0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x20}, {-1.0, 0.25}},
		{"S32LE",
		 4,
		 {0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0x7f},
		 {1.0 / 2147483648.0, 2147483647.0 / 2147483648.0}},
		{"F32_LE", 4, {0x00, 0x00, 0x40, 0x3f, 0x00, 0x00, 0x00, 0xc0}, {0.75, -2.0}},
		{"FLOAT32LE", 4, {0x00, 0x00, 0x80, 0x3e, 0x00, 0x00, 0x00, 0x00}, {0.25, 0.0}},
		{"F64_LE", 8, {0, 0, 0, 0, 0, 0, 0xd0, 0xbf, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, {-0.25, 1.0}},
		{"FLOAT64LE", 8, {0, 0, 0, 0, 0, 0, 0x04, 0x40, 0, 0, 0, 0, 0, 0, 0, 0x80}, {2.5, -0.0}},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum gf_raw_format fmt = gf_taps_raw_parse(cases[i].name);
		CHECK(fmt != GF_RAW_NONE && gf_taps_raw_size(fmt) == cases[i].size);
		CHECK(strstr(gf_taps_raw_names(), cases[i].name)); /* the messages list it */
		struct gf_ir_select sel = {0};
		struct gf_errbuf eb = {{0}};
		double *h = NULL;
		uint32_t n = 0;
		CHECK_OK_EB(gf_taps_parse_raw(cases[i].bytes, 2 * cases[i].size, cases[i].name, fmt, &sel, &h,
					      &n, &eb),
			    &eb);
		CHECK(n == 2 && h[0] == cases[i].want[0] && h[1] == cases[i].want[1]);
		printf("  %s: %g, %g\n", cases[i].name, h[0], h[1]);
		free(h);
	}
	/* the same format by either name; case does not matter */
	CHECK(gf_taps_raw_parse("f64_le") == GF_RAW_FLOAT64LE &&
	      gf_taps_raw_parse("S24_3_LE") == GF_RAW_S24LE3);
	CHECK(gf_taps_raw_parse("S24_4_RJ_LE") == GF_RAW_S24LE);
	CHECK(gf_taps_raw_parse("S24_4_LE") == GF_RAW_NONE); /* ambiguous: CamillaDSP has no such name */
	CHECK(gf_taps_raw_parse("TEXT") == GF_RAW_NONE);

	/* through a config, v4's name */
	unsigned char img[8] = {0, 0, 0, 0, 0, 0, 0xd0, 0xbf};
	char *p = gf_test_path(dir, "v4.bin");
	gf_test_write_file(p, img, 8);
	free(p);
	int err;
	struct gf_errbuf eb = {{0}};
	struct gf_filter_set *fs =
		build_conf("filters = ( { name = \"a\"; file = \"v4.bin\"; format = \"F64_LE\"; } );\n"
			   "chain = [\"a\"];\n",
			   &eb, &err);
	CHECK_OK_EB(err, &eb);
	CHECK(fs->taps == 1 && gf_filter_set_channel(fs, 0)[0] == -0.25f);
	gf_filter_set_free(fs);
}

static void test_raw_extensions_and_errors(void)
{
	unsigned char img[16];
	double one = 0.5, two = -0.25;
	uint64_t u;
	memcpy(&u, &one, 8), put_le(img, u, 8);
	memcpy(&u, &two, 8), put_le(img + 8, u, 8);
	char *p = gf_test_path(dir, "rephase.dbl");
	gf_test_write_file(p, img, 16);
	free(p);
	float f = 0.75f;
	uint32_t v;
	memcpy(&v, &f, 4), put_le(img, v, 4);
	p = gf_test_path(dir, "drc.pcm");
	gf_test_write_file(p, img, 4);
	free(p);
	int err;
	struct gf_errbuf eb = {{0}};
	struct gf_filter_set *fs = build_conf("filters = ( { name = \"a\"; file = \"rephase.dbl\"; },\n"
					      "  { name = \"b\"; file = \"drc.pcm\"; } );\n"
					      "chain = [\"a\", \"b\"];\n",
					      &eb, &err);
	CHECK_OK_EB(err, &eb);
	CHECK(fs->taps == 2 && gf_filter_set_channel(fs, 0)[0] == 0.375f &&
	      gf_filter_set_channel(fs, 0)[1] == -0.1875f);
	gf_filter_set_free(fs);

	p = gf_test_path(dir, "empty.raw");
	gf_test_write_file(p, img, 0);
	free(p);
	fs = build_conf("filters = ( { name = \"a\"; file = \"empty.raw\"; format = \"S16LE\"; } );\n"
			"chain = [\"a\"];\n",
			&eb, &err);
	CHECK(err == GF_E_CONFIG && strstr(eb.msg, "empty.raw: the file is empty"));
	fs = build_conf("filters = ( { name = \"a\"; file = \"drc.pcm\"; format = \"S20LE\"; } );\n"
			"chain = [\"a\"];\n",
			&eb, &err);
	printf("  expected error: %s\n", eb.msg);
	CHECK(err == GF_E_CONFIG && strstr(eb.msg, "filters.a.format") && strstr(eb.msg, "FLOAT64LE"));
	/* the list names every accepted format, v4's names too */
	CHECK(strstr(eb.msg, "S24_3_LE") && strstr(eb.msg, "S24_4_LJ_LE") && strstr(eb.msg, "F64_LE") &&
	      strstr(eb.msg, "\"S20LE\""));
	/* a NaN in a float file */
	memcpy(img, (unsigned char[]){0, 0, 0xc0, 0x7f}, 4);
	struct gf_ir_select sel = {0};
	double *h = (double *)1;
	uint32_t n = 1;
	CHECK(gf_taps_parse_raw(img, 4, "nan.pcm", GF_RAW_FLOAT32LE, &sel, &h, &n, &eb) == GF_E_NONFINITE);
	CHECK(!h && !n && strstr(eb.msg, "nan.pcm: sample 0 is not finite"));
	sel.channel = 1;
	CHECK(gf_taps_parse_raw(img, 4, "x.raw", GF_RAW_S16LE, &sel, &h, &n, &eb) == GF_E_CONFIG);
}

/* Acourate writes 64-bit float WAV: the taps come back as doubles, not rounded to float. */
static void test_wav_float64(void)
{
	char *p = gf_test_path(dir, "acourate.wav");
	SF_INFO info = {.samplerate = 48000, .channels = 2, .format = SF_FORMAT_WAV | SF_FORMAT_DOUBLE};
	SNDFILE *sf = sf_open(p, SFM_WRITE, &info);
	CHECK(sf);
	double x[2 * 64];
	for (int i = 0; i < 128; i++)
		x[i] = (i & 1 ? -1.0 : 1.0) * (1.0 + 1e-12 * i) / (1 + i / 2) * (i == 10 ? 2.5 : 1.0);
	CHECK(sf_writef_double(sf, x, 64) == 64);
	sf_close(sf);
	for (uint32_t c = 0; c < 2; c++) {
		struct gf_ir_select sel = {.channel = c};
		double *h;
		uint32_t n;
		struct gf_errbuf eb = {{0}};
		CHECK_OK_EB(gf_taps_read_wav(p, 48000, &sel, &h, &n, NULL, &eb), &eb);
		CHECK(n == 64);
		for (uint32_t k = 0; k < n; k++)
			CHECK(h[k] == x[2 * k + c]); /* beyond full scale too (2.5) */
		free(h);
	}
	free(p);
}

/* One stereo IR file, channel = "route": audio channel c takes the file's channel c. */
static void test_wav_channel_per_route(void)
{
	char *p = gf_test_path(dir, "stereo.wav");
	SF_INFO info = {.samplerate = 48000, .channels = 2, .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT};
	SNDFILE *sf = sf_open(p, SFM_WRITE, &info);
	CHECK(sf);
	const float x[] = {0.5f, -0.5f, 0.25f, 0.125f, 0.0f, 0.0625f};
	CHECK(sf_writef_float(sf, x, 3) == 3);
	sf_close(sf);
	free(p);
	int err;
	struct gf_errbuf eb = {{0}};
	/* the global chain, and a route with a gain: both follow the audio channel */
	struct gf_filter_set *fs =
		build_conf("filters = ( { name = \"room\"; file = \"stereo.wav\"; channel = \"route\"; } );\n"
			   "chain = [\"room\"];\n"
			   "routes = ( { channel = 1; gain_db = 6.0205999132796; } );\n",
			   &eb, &err);
	CHECK_OK_EB(err, &eb);
	const float *a = gf_filter_set_channel(fs, 0), *b = gf_filter_set_channel(fs, 1);
	CHECK(a[0] == 0.5f && a[1] == 0.25f && a[2] == 0.0f);
	CHECK(fabsf(b[0] + 1.0f) < 1e-6f && fabsf(b[1] - 0.25f) < 1e-6f && fabsf(b[2] - 0.125f) < 1e-6f);
	gf_filter_set_free(fs);
	/* three audio channels, two in the file: the message names the file and the channel */
	struct gf_config *c = NULL;
	CHECK_OK_EB(gf_config_load_string("filters = ( { name = \"room\"; file = \"stereo.wav\"; "
					  "channel = \"route\"; } );\nchain = [\"room\"];\n",
					  dir, &c, &eb),
		    &eb);
	CHECK(gf_config_build(c, 48000, 3, &fs, &eb) == GF_E_CONFIG);
	printf("  expected error: %s\n", eb.msg);
	CHECK(strstr(eb.msg, "stereo.wav: channel 2, but the file has 2 channels"));
	gf_config_free(c);
	CHECK(gf_config_load_string("filters = ( { name = \"room\"; file = \"stereo.wav\"; "
				    "channel = \"left\"; } );\nchain = [\"room\"];\n",
				    dir, &c, &eb) == GF_E_CONFIG);
	CHECK(strstr(eb.msg, "filters.room.channel: must be a channel number or \"route\""));
}

/*
 * resample = true: an IR at another rate. @p h at @p rate: a low-pass at 16 kHz
 * (windowed sinc, 255 taps, centred at 200: content close to the band edge) and an echo of it, 0.5 x, 400
 * taps later, so that both the magnitude and the timing (phase) are tested.
 */
static uint32_t make_ir(double *h, uint32_t rate)
{
	const uint32_t n = 1024;
	memset(h, 0, n * sizeof(double));
	for (int echo = 0; echo < 2; echo++)
		for (int k = -127; k <= 127; k++) {
			double x = 2.0 * 16000.0 / rate,
			       w = 0.42 + 0.5 * cos(M_PI * k / 128.0) + 0.08 * cos(2.0 * M_PI * k / 128.0);
			double s = k ? sin(M_PI * x * k) / (M_PI * k) : x;
			h[200 + 400 * echo + k] += (echo ? 0.5 : 1.0) * s * w;
		}
	return n;
}

/* The largest |H_b(f) - H_a(f) e^(-j 2 pi f delay / rb)| from 20 Hz to @p top (DTFT, 200 log-spaced
 * points), over max |H_a|: b is a delayed by @p delay of its taps. */
static double response_error(const double *a, uint32_t na, uint32_t ra, const float *bf, const double *bd,
			     uint32_t nb, uint32_t rb, double delay, double top)
{
	double worst = 0, peak = 0;
	for (int i = 0; i < 200; i++) {
		double f = 20.0 * pow(top / 20.0, i / 199.0), re[2] = {0, 0}, im[2] = {0, 0};
		for (uint32_t k = 0; k < na; k++) {
			re[0] += a[k] * cos(2 * M_PI * f * k / ra);
			im[0] -= a[k] * sin(2 * M_PI * f * k / ra);
		}
		for (uint32_t k = 0; k < nb; k++) {
			double v = bf ? bf[k] : bd[k];
			re[1] += v * cos(2 * M_PI * f * (k - delay) / rb);
			im[1] -= v * sin(2 * M_PI * f * (k - delay) / rb);
		}
		peak = fmax(peak, hypot(re[0], im[0]));
		worst = fmax(worst, hypot(re[1] - re[0], im[1] - im[0]));
	}
	return worst / peak;
}

/* Resampled IRs keep the response: within 1e-4 of the peak (-80 dB), gain and phase alike. */
static void test_resample_response(void)
{
	static const uint32_t pairs[][2] = {{44100, 48000}, {48000, 44100}, {96000, 48000}, {48000, 96000}};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		uint32_t from = pairs[i][0], to = pairs[i][1];
		double h[1024], *y, delay;
		uint32_t n = make_ir(h, from), m;
		struct gf_errbuf eb = {{0}};
		CHECK_OK_EB(gf_taps_resample(h, n, from, to, &y, &m, &delay, &eb), &eb);
		/* the whole response: the sinc's reach (about 144 taps) on both sides */
		CHECK(delay >= 143.0 && delay < 2 * 160.0);
		CHECK(m >= (uint32_t)ceil(n * (double)to / from + delay + 143.0));
		double fmax = 0.9 * (from < to ? from : to) / 2.0;
		double e = response_error(h, n, from, NULL, y, m, to, delay, fmax);
		printf("  resampled %u -> %u Hz: %u -> %u taps, delayed %.2f, response error %.1f dB of the "
		       "peak up to %.0f Hz\n",
		       from, to, n, m, delay, 20 * log10(e), fmax);
		CHECK(e < 1e-4);
		free(y);
	}
	double h[1024] = {0}, *y = (double *)1, delay;
	uint32_t m = 1;
	struct gf_errbuf eb = {{0}};
	CHECK(gf_taps_resample(h, 1024, 8000, 384000, &y, &m, &delay, &eb) == 0 &&
	      m == (1024 + 2 * 144) * 48);
	CHECK(delay == 144 * 48);
	free(y);
	CHECK(gf_taps_resample(h, GF_TAPS_MAX, 8000, 16000, &y, &m, &delay, &eb) == GF_E_TOOLONG && !y && !m);
	CHECK(strstr(eb.msg, "tap limit"));
}

/* Through a config: without resample = true another rate is an error that says how; with it, resampled. */
static void test_resample_config(void)
{
	double h[1024];
	uint32_t n = make_ir(h, 44100);
	char *p = gf_test_path(dir, "ir44.wav");
	SF_INFO info = {.samplerate = 44100, .channels = 1, .format = SF_FORMAT_WAV | SF_FORMAT_DOUBLE};
	SNDFILE *sf = sf_open(p, SFM_WRITE, &info);
	CHECK(sf && sf_writef_double(sf, h, n) == n);
	sf_close(sf);
	free(p);
	int err;
	struct gf_errbuf eb = {{0}};
	struct gf_filter_set *fs = build_conf(
		"filters = ( { name = \"room\"; file = \"ir44.wav\"; } );\nchain = [\"room\"];\n", &eb, &err);
	printf("  expected error: %s\n", eb.msg);
	CHECK(err == GF_E_RATE && !fs && strstr(eb.msg, "44100 Hz") && strstr(eb.msg, "48000 Hz") &&
	      strstr(eb.msg, "resample = true"));
	fs = build_conf("filters = ( { name = \"room\"; file = \"ir44.wav\"; resample = true; } );\n"
			"chain = [\"room\"];\n",
			&eb, &err);
	CHECK_OK_EB(err, &eb);
	/* 147 zeros in front, 144 behind: 160 taps of delay at 48 kHz */
	CHECK(fs->taps == (uint32_t)ceil((147 + n + 144) * 48000.0 / 44100));
	double e = response_error(h, n, 44100, gf_filter_set_channel(fs, 0), NULL, fs->taps, 48000, 160.0,
				  0.9 * 22050);
	printf("  config, 44100 -> 48000 Hz: response error %.1f dB of the peak\n", 20 * log10(e));
	CHECK(e < 1e-4);
	gf_filter_set_free(fs);
	/* at its own rate, resample = true changes nothing */
	p = gf_test_path(dir, "ir48.wav");
	info = (SF_INFO){.samplerate = 48000, .channels = 1, .format = SF_FORMAT_WAV | SF_FORMAT_DOUBLE};
	sf = sf_open(p, SFM_WRITE, &info);
	CHECK(sf && sf_writef_double(sf, h, n) == n);
	sf_close(sf);
	free(p);
	fs = build_conf("filters = ( { name = \"room\"; file = \"ir48.wav\"; resample = true; } );\n"
			"chain = [\"room\"];\n",
			&eb, &err);
	CHECK_OK_EB(err, &eb);
	CHECK(fs->taps == n);
	for (uint32_t k = 0; k < n; k++)
		CHECK(gf_filter_set_channel(fs, 0)[k] == (float)h[k]);
	gf_filter_set_free(fs);
}

int main(void)
{
	dir = gf_test_tmpdir("taps_formats");
	test_raw_round_trips();
	test_raw_names_known_bytes();
	test_raw_extensions_and_errors();
	test_wav_float64();
	test_wav_channel_per_route();
	test_resample_response();
	test_resample_config();
	gf_test_rmtree(dir);
	free(dir);
	puts("test_taps_formats: OK");
	return 0;
}
