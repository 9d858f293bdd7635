/* speex_denoise: a sound file through libspeexdsp's preprocessor (noise suppression only), for
 * bench/bench-denoise.sh.
 *
 *   speex_denoise IN OUT [SUPPRESS_DB]
 *
 * 20 ms frames at IN's rate, SPEEX_PREPROCESS_SET_DENOISE on, AGC, VAD and dereverb off (their
 * defaults), and the default suppression (-15 dB) unless SUPPRESS_DB (a negative number) is given.
 * IN must be mono; OUT keeps IN's format and length. The preprocessor works on 16-bit samples:
 * the audio is read as float, scaled by 32768, rounded and clipped to 16 bits, and written back
 * divided by 32768 (libsndfile's own float-to-short read would not scale float files by default).
 * Built by the script with: cc -O2 speex_denoise.c -o speex_denoise -lspeexdsp -lsndfile
 */
#include <math.h>
#include <sndfile.h>
#include <speex/speex_preprocess.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s IN OUT [SUPPRESS_DB]\n", argv[0]);
		return 2;
	}
	SF_INFO info;
	memset(&info, 0, sizeof info);
	SNDFILE *in = sf_open(argv[1], SFM_READ, &info);
	if (!in) {
		fprintf(stderr, "%s: %s\n", argv[1], sf_strerror(NULL));
		return 1;
	}
	if (info.channels != 1) {
		fprintf(stderr, "%s: %d channels; only mono is supported\n", argv[1], info.channels);
		return 1;
	}
	SF_INFO oinfo = info;
	SNDFILE *out = sf_open(argv[2], SFM_WRITE, &oinfo);
	if (!out) {
		fprintf(stderr, "%s: %s\n", argv[2], sf_strerror(NULL));
		sf_close(in);
		return 1;
	}

	const int frame = info.samplerate / 50; /* 20 ms */
	SpeexPreprocessState *st = speex_preprocess_state_init(frame, info.samplerate);
	if (!st) {
		fprintf(stderr, "speex_preprocess_state_init(%d, %d) failed\n", frame, info.samplerate);
		return 1;
	}
	int on = 1;
	speex_preprocess_ctl(st, SPEEX_PREPROCESS_SET_DENOISE, &on);
	if (argc == 4) {
		int db = atoi(argv[3]);
		speex_preprocess_ctl(st, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, &db);
	}
	spx_int16_t *buf = calloc((size_t)frame, sizeof *buf);
	float *fbuf = calloc((size_t)frame, sizeof *fbuf);
	if (!buf || !fbuf) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	int rc = 0;
	for (;;) {
		sf_count_t n = sf_readf_float(in, fbuf, frame);
		if (n <= 0)
			break;
		for (int i = 0; i < frame; i++) { /* the last frame: zero-padded, only n written */
			float v = i < n ? lrintf(fbuf[i] * 32768.0f) : 0.0f;
			buf[i] = (spx_int16_t)(v > 32767.0f ? 32767.0f : v < -32768.0f ? -32768.0f : v);
		}
		speex_preprocess_run(st, buf);
		for (int i = 0; i < n; i++)
			fbuf[i] = (float)buf[i] / 32768.0f;
		if (sf_writef_float(out, fbuf, n) != n) {
			fprintf(stderr, "%s: %s\n", argv[2], sf_strerror(out));
			rc = 1;
			break;
		}
	}
	free(buf);
	free(fbuf);
	speex_preprocess_state_destroy(st);
	sf_close(in);
	if (sf_close(out) != 0)
		rc = 1;
	return rc;
}
