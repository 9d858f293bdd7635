/* Noise recordings: opened the one safe way, and read as one mono sample. */
#include "noise_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "safe_file.h"

int gf_noise_open(const char *path, const char *key, double rate, SNDFILE **f, SF_INFO *info,
		  struct gf_errbuf *eb)
{
	memset(info, 0, sizeof(*info));
	struct gf_errbuf why;
	int fd = gf_file_open_read(path, "noise file", 0, &why); /* a FIFO never blocks a reload */
	if (fd < 0) {
		gf_errbuf_set(eb, "%s: %s", key, why.msg);
		return GF_E_CONFIG;
	}
	*f = sf_open_fd(fd, SFM_READ, info, SF_TRUE); /* closes fd, even on failure */
	if (!*f) {
		gf_errbuf_set(eb, "%s: cannot read %s: %s", key, path, sf_strerror(NULL));
		return GF_E_CONFIG;
	}
	if ((double)info->samplerate != rate) {
		gf_errbuf_set(eb,
			      "%s: %s is at %d Hz but the filter runs at %g Hz; record the noise at %g Hz or "
			      "resample it (e.g. sox in.wav -r %g out.wav)",
			      key, path, info->samplerate, rate, rate, rate);
		sf_close(*f);
		*f = NULL;
		return GF_E_CONFIG;
	}
	return 0;
}

/* Append channel after channel of the interleaved @p buf (@p got frames) to the mono sample. */
static void append_channels(const float *buf, uint32_t ch, uint64_t got, float *mono, uint64_t per_ch,
			    uint64_t at)
{
	for (uint32_t c = 0; c < ch; c++)
		for (uint64_t i = 0; i < got; i++)
			mono[c * per_ch + at + i] = buf[i * ch + c];
}

/*
 * Every sample finite and within GF_NOISE_MAX_PEAK: a NaN would turn the seeded
 * estimate into NaN, and a sample far above full scale (a float file written
 * at another scale) into one so high that nothing is suppressed until it
 * adapts down, seconds later. @p x holds @p ch channels of @p per_ch frames,
 * one after another.
 */
static int check_samples(const float *x, uint32_t ch, uint64_t per_ch, const char *key, const char *path,
			 struct gf_errbuf *eb)
{
	for (uint64_t i = 0; i < per_ch * ch; i++) {
		if (isfinite(x[i]) && fabsf(x[i]) <= GF_NOISE_MAX_PEAK)
			continue;
		unsigned c = (unsigned)(i / per_ch);
		unsigned long long frame = i % per_ch;
		if (!isfinite(x[i]))
			gf_errbuf_set(eb, "%s: %s: channel %u, frame %llu is %s: not a recording of noise",
				      key, path, c, frame, isnan(x[i]) ? "NaN" : "Inf");
		else
			gf_errbuf_set(eb,
				      "%s: %s: channel %u, frame %llu is %g, beyond +-%g (%+.0f dBFS): not a "
				      "recording of noise (a float file at another scale?)",
				      key, path, c, frame, (double)x[i], GF_NOISE_MAX_PEAK,
				      20.0 * log10(GF_NOISE_MAX_PEAK));
		return GF_E_CONFIG;
	}
	return 0;
}

static int check_level(const float *x, uint64_t n, const char *key, const char *path, struct gf_errbuf *eb)
{
	double sumsq = 0.0;
	for (uint64_t i = 0; i < n; i++)
		sumsq += (double)x[i] * x[i];
	double dbfs = n ? 10.0 * log10(sumsq / (double)n + 1e-300) : -INFINITY;
	if (!n) {
		gf_errbuf_set(eb, "%s: %s holds no audio: record the room's noise", key, path);
		return GF_E_CONFIG;
	}
	if (!(dbfs > GF_NOISE_SILENCE_DBFS)) {
		gf_errbuf_set(eb,
			      "%s: %s is silent (%.1f dBFS RMS, below %.0f dBFS): record the room's noise",
			      key, path, dbfs, GF_NOISE_SILENCE_DBFS);
		return GF_E_CONFIG;
	}
	if (dbfs > GF_NOISE_LOUD_DBFS) {
		gf_errbuf_set(eb,
			      "%s: %s is %.1f dBFS RMS, above %.0f dBFS: louder than full scale, not a "
			      "recording of a room's noise",
			      key, path, dbfs, GF_NOISE_LOUD_DBFS);
		return GF_E_CONFIG;
	}
	return 0;
}

int gf_noise_read_mono(const char *path, const char *key, double rate, uint64_t max_frames, float **out,
		       uint64_t *frames, struct gf_errbuf *eb)
{
	*out = NULL;
	*frames = 0;
	SNDFILE *f;
	SF_INFO info;
	int r = gf_noise_open(path, key, rate, &f, &info, eb);
	if (r)
		return r;
	uint32_t ch = (uint32_t)info.channels;
	uint64_t per_ch = info.frames > 0 ? (uint64_t)info.frames : 0;
	if (per_ch * ch > max_frames)
		per_ch = max_frames / ch;
	float *mono = malloc((per_ch ? per_ch : 1) * ch * sizeof(float));
	float *buf = malloc(4096u * ch * sizeof(float));
	uint64_t have = 0;
	r = mono && buf ? 0 : GF_E_NOMEM;
	while (!r && have < per_ch) {
		sf_count_t want = per_ch - have < 4096u ? (sf_count_t)(per_ch - have) : 4096;
		sf_count_t got = sf_readf_float(f, buf, want);
		if (got <= 0)
			break;
		append_channels(buf, ch, (uint64_t)got, mono, per_ch, have);
		have += (uint64_t)got;
	}
	sf_close(f);
	free(buf);
	if (!r && have < per_ch) /* fewer frames than the header said: close the gaps */
		for (uint32_t c = 1; c < ch; c++)
			memmove(mono + c * have, mono + c * per_ch, have * sizeof(float));
	if (!r)
		r = check_samples(mono, ch, have, key, path, eb);
	if (!r)
		r = check_level(mono, have * ch, key, path, eb);
	if (r) {
		free(mono);
		return r;
	}
	*out = mono;
	*frames = have * ch;
	return 0;
}
