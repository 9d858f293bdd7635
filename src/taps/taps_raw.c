/*
 * Raw impulse responses: headerless mono little-endian samples, the files
 * rePhase (.dbl, float64), DRC-FIR (.pcm, float32), BruteFIR and CamillaDSP
 * read and write. Without a header nothing checks the format, so the one
 * check there is matters: the size must be a whole number of samples.
 * CamillaDSP 4 renamed the formats (ALSA's style: "S24_3_LE"); configs written
 * for either version name the same files, so both sets of names are accepted.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "safe_file.h"
#include "taps_io.h"

/* The first entry of a format names it in messages; the rest are aliases. */
static const struct {
	const char *name;
	enum gf_raw_format fmt;
	unsigned size;
} formats[] = {
	{"FLOAT32LE", GF_RAW_FLOAT32LE, 4},
	{"FLOAT64LE", GF_RAW_FLOAT64LE, 8},
	{"S16LE", GF_RAW_S16LE, 2},
	{"S24LE3", GF_RAW_S24LE3, 3},
	{"S24LE", GF_RAW_S24LE, 4},
	{"S32LE", GF_RAW_S32LE, 4},
	/* CamillaDSP 4 */
	{"S16_LE", GF_RAW_S16LE, 2},
	{"S24_3_LE", GF_RAW_S24LE3, 3},
	{"S24_4_RJ_LE", GF_RAW_S24LE, 4},    /* right-justified: the low 3 bytes */
	{"S24_4_LJ_LE", GF_RAW_S24LE4LJ, 4}, /* left-justified: the high 3 bytes */
	{"S32_LE", GF_RAW_S32LE, 4},
	{"F32_LE", GF_RAW_FLOAT32LE, 4},
	{"F64_LE", GF_RAW_FLOAT64LE, 8},
};
#define N_FORMATS (sizeof(formats) / sizeof(formats[0]))

enum gf_raw_format gf_taps_raw_parse(const char *name)
{
	for (size_t i = 0; i < N_FORMATS; i++)
		if (strcasecmp(name, formats[i].name) == 0)
			return formats[i].fmt;
	return GF_RAW_NONE;
}

const char *gf_taps_raw_names(void)
{
	return "FLOAT32LE, FLOAT64LE, S16LE, S24LE3, S24LE, S32LE, " /* the table's order */
	       "S16_LE, S24_3_LE, S24_4_RJ_LE, S24_4_LJ_LE, S32_LE, F32_LE, F64_LE";
}

const char *gf_taps_raw_name(enum gf_raw_format f)
{
	for (size_t i = 0; i < N_FORMATS; i++)
		if (formats[i].fmt == f)
			return formats[i].name;
	return "?";
}

unsigned gf_taps_raw_size(enum gf_raw_format f)
{
	for (size_t i = 0; i < N_FORMATS; i++)
		if (formats[i].fmt == f)
			return formats[i].size;
	return 0;
}

enum gf_raw_format gf_taps_raw_by_extension(const char *path)
{
	const char *dot = strrchr(path, '.');
	const char *slash = strrchr(path, '/');
	if (!dot || (slash && dot < slash))
		return GF_RAW_NONE;
	if (strcasecmp(dot + 1, "dbl") == 0)
		return GF_RAW_FLOAT64LE;
	if (strcasecmp(dot + 1, "pcm") == 0)
		return GF_RAW_FLOAT32LE;
	return GF_RAW_NONE;
}

/* Little-endian decoding, independent of the host's byte order. */
static uint64_t le(const unsigned char *p, unsigned bytes)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* 3 bytes as a signed 24-bit value (bit 23 extended), scaled to [-1, 1). */
static double s24(const unsigned char *p)
{
	return (double)((int32_t)((uint32_t)le(p, 3) << 8) >> 8) / 8388608.0;
}

static double decode(const unsigned char *p, enum gf_raw_format f)
{
	switch (f) {
	case GF_RAW_FLOAT32LE: {
		uint32_t u = (uint32_t)le(p, 4);
		float x;
		memcpy(&x, &u, sizeof(x));
		return x;
	}
	case GF_RAW_FLOAT64LE: {
		uint64_t u = le(p, 8);
		double x;
		memcpy(&x, &u, sizeof(x));
		return x;
	}
	case GF_RAW_S16LE:
		return (int16_t)le(p, 2) / 32768.0;
	case GF_RAW_S24LE3:
	case GF_RAW_S24LE: /* the fourth byte of S24LE is padding */
		return s24(p);
	case GF_RAW_S32LE:
		return (int32_t)le(p, 4) / 2147483648.0;
	case GF_RAW_S24LE4LJ: /* the first (low) byte is padding */
		return s24(p + 1);
	default:
		return NAN;
	}
}

static int check_raw(size_t size, const char *name, enum gf_raw_format fmt, const struct gf_ir_select *sel,
		     uint64_t *first, uint64_t *count, struct gf_errbuf *eb)
{
	unsigned ss = gf_taps_raw_size(fmt);
	if (!ss)
		return GF_E_INVAL;
	if (size % ss) {
		gf_errbuf_set(
			eb,
			"%s: %zu bytes is not a whole number of %u-byte %s samples (%zu byte%s left over: "
			"truncated, or another format?)",
			name, size, ss, gf_taps_raw_name(fmt), size % ss, size % ss == 1 ? "" : "s");
		return GF_E_FORMAT;
	}
	uint64_t samples = size / ss;
	if (samples == 0) {
		gf_errbuf_set(eb, "%s: the file is empty", name);
		return GF_E_FORMAT;
	}
	if (sel->channel != 0) {
		gf_errbuf_set(eb, "%s: channel %u, but a raw %s file has one channel (0)", name, sel->channel,
			      gf_taps_raw_name(fmt));
		return GF_E_CONFIG;
	}
	if (sel->offset >= samples) {
		gf_errbuf_set(eb, "%s: offset %llu is not inside the file's %llu samples", name,
			      (unsigned long long)sel->offset, (unsigned long long)samples);
		return GF_E_CONFIG;
	}
	if (sel->length && sel->offset + sel->length > samples) {
		gf_errbuf_set(eb, "%s: offset %llu + length %llu exceed the file's %llu samples", name,
			      (unsigned long long)sel->offset, (unsigned long long)sel->length,
			      (unsigned long long)samples);
		return GF_E_CONFIG;
	}
	*first = sel->offset;
	*count = sel->length ? sel->length : samples - sel->offset;
	if (*count > GF_TAPS_MAX) {
		gf_errbuf_set(eb, "%s: %llu samples is more than the %u-tap limit; set length", name,
			      (unsigned long long)*count, GF_TAPS_MAX);
		return GF_E_CONFIG;
	}
	return 0;
}

int gf_taps_parse_raw(const void *data, size_t size, const char *name, enum gf_raw_format fmt,
		      const struct gf_ir_select *sel, double **taps, uint32_t *n, struct gf_errbuf *eb)
{
	*taps = NULL;
	*n = 0;
	uint64_t first, count;
	int r = check_raw(size, name, fmt, sel, &first, &count, eb);
	if (r)
		return r;
	double *h = malloc((size_t)count * sizeof(double));
	if (!h)
		return GF_E_NOMEM;
	unsigned ss = gf_taps_raw_size(fmt);
	const unsigned char *p = (const unsigned char *)data + first * ss;
	for (uint64_t i = 0; i < count; i++) {
		h[i] = decode(p + i * ss, fmt);
		if (!isfinite(h[i])) {
			gf_errbuf_set(eb, "%s: sample %llu is not finite", name,
				      (unsigned long long)(first + i));
			free(h);
			return GF_E_NONFINITE;
		}
	}
	*taps = h;
	*n = (uint32_t)count;
	return 0;
}

int gf_taps_read_raw(const char *path, enum gf_raw_format fmt, const struct gf_ir_select *sel, double **taps,
		     uint32_t *n, struct gf_errbuf *eb)
{
	*taps = NULL;
	*n = 0;
	FILE *fp;
	int err = gf_file_fopen_read(path, "filter file", 0, &fp, eb); /* never blocks on a FIFO */
	if (err)
		return err;
	/* 16 Mi float64 samples at most (and offset): bound what is read into memory */
	struct stat st;
	uint64_t max = (uint64_t)GF_TAPS_MAX * 8u + (sel->offset * gf_taps_raw_size(fmt));
	if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		gf_errbuf_set(eb, "%s: not a regular file of at most %llu MiB", path,
			      (unsigned long long)(max >> 20));
		fclose(fp);
		return GF_E_IO;
	}
	size_t size = (size_t)st.st_size;
	unsigned char *buf = malloc(size ? size : 1);
	int r = buf ? 0 : GF_E_NOMEM;
	if (!r && fread(buf, 1, size, fp) != size) {
		gf_errbuf_set(eb, "%s: read error: %s", path, ferror(fp) ? strerror(errno) : "short read");
		r = GF_E_IO;
	}
	fclose(fp);
	if (!r)
		r = gf_taps_parse_raw(buf, size, path, fmt, sel, taps, n, eb);
	free(buf);
	return r;
}
