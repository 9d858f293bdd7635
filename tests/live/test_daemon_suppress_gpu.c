/* The noise suppressor on the GPU under the real `gpufir --live`, against a
 * private JACK server (dummy driver with 8 ports, sync mode), as systemd
 * runs it: backend "cuda", 8 channels, a pass-through FIR and the suppressor
 * (one setting on every channel: GF_SUPPRESS_GPU_MIN_CHANNELS, so the bank
 * puts them on the GPU).
 *
 * A JACK client feeds each channel a speech-like signal (a harmonic voice
 * with a syllable rhythm) for 1 s, then 1 s of its noise floor alone, over
 * and over, always over white noise 20 dB below the voice, and records what
 * comes back. Checked:
 * 1. the status socket says the suppressor runs on the GPU
 *    (suppressor_where "8 channels on the GPU", suppressor_gpu_channels 8),
 *    the engine on cuda, and after the run no GPU hop failed or missed the
 *    block's deadline (suppress_gpu_failures 0) and no engine error;
 * 2. the recording is denoised, measured per channel in the middle of each
 *    stretch (away from the edges by the path's delay, read from status, plus
 *    0.1 s): the noise-only stretches come back at least 8 dB quieter than
 *    they went in, the voice stretches within 3 dB of their input energy.
 *
 * Exits 77 where no CUDA device is usable (or without jackd).
 * GPUFIR_TEST_BACKEND=cpu runs the same on the CPU backend, where the
 * suppressor runs on the CPU: the test's own check on a machine without a GPU. */
#include <jack/jack.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemonutil.h"
#include "status.h"
#include "testutil.h"

#define RATE 48000
#define CH 8
#define BLOCK 256 /* the deadline, two periods: 10.7 ms, as test_gpu_suppress_bank's */
#define MAX_S 30
#define MAX_FRAMES ((size_t)RATE * MAX_S)
#define SEG ((size_t)RATE)	  /* voice, then noise alone, each this long */
#define ADAPT_S 2		  /* seconds after connecting before the measure */
#define MEASURE_S 8		  /* seconds measured: 4 of each */
#define GUARD ((size_t)RATE / 10) /* the suppressor's attack and release at each edge */
#define NOISE_AMP 0.02f
#define MIN_NR_DB 8.0
#define MAX_VOICE_LOSS_DB 3.0

static struct gf_daemon dm;
static float *x, *rec;
static struct gf_daemon_tap tap;

/* Channel @p c at frame @p i: a voice in even seconds (harmonics of a pitch of its own, 4 syllables a
 * second), the noise floor always. */
static void make_input(uint64_t *rng)
{
	for (size_t i = 0; i < MAX_FRAMES; i++)
		for (int c = 0; c < CH; c++) {
			double t = (double)i / RATE, v = 0.0;
			if ((i / SEG) % 2 == 0) {
				double f0 = 110.0 + 15.0 * c, env = 0.5 - 0.5 * cos(2.0 * M_PI * 4.0 * t);
				for (int k = 1; k <= 12; k++)
					v += sin(2.0 * M_PI * k * f0 * t + 0.7 * k) / k;
				v *= 0.08 * env;
			}
			x[i * CH + c] = (float)v + NOISE_AMP * gf_test_randf(rng);
		}
}

static void write_conf(const char *backend)
{
	const float one = 1.0f;
	gf_daemon_write_taps_text(&dm, "id.txt", &one, 1);
	FILE *f = gf_daemon_conf_begin(&dm, RATE, BLOCK, backend, CH, "system");
	fprintf(f, "filters = ( { name = \"f\"; file = \"id.txt\"; format = \"text\"; },\n"
		   "  { name = \"nr\"; design = \"suppress\"; reduction_db = 18.0; } );\n"
		   "chain = [\"f\", \"nr\"];\n");
	CHECK(fclose(f) == 0);
}

/* Energy of channel @p c of @p buf over frames [from, to). */
static double energy(const float *buf, int c, size_t from, size_t to)
{
	double e = 0.0;
	for (size_t i = from; i < to; i++)
		e += (double)buf[i * CH + c] * buf[i * CH + c];
	return e;
}

/*
 * Per channel, over the whole stretches within [@p m0, @p m1) (feed frames): recording frame m
 * holds input m - @p d, give or take a period. The worst noise reduction and voice loss, in dB.
 */
static void measure(size_t m0, size_t m1, size_t d, double *worst_nr, double *worst_loss)
{
	*worst_nr = INFINITY;
	*worst_loss = -INFINITY;
	for (int c = 0; c < CH; c++) {
		double in[2] = {0, 0}, out[2] = {0, 0};
		for (size_t s = (m0 + SEG - 1) / SEG * SEG; s + SEG <= m1; s += SEG) {
			int noise = (s / SEG) % 2;
			size_t a = s + GUARD + BLOCK, b = s + SEG - GUARD - BLOCK; /* input frames */
			in[noise] += energy(x, c, a, b);
			out[noise] += energy(rec, c, a + d, b + d);
		}
		double nr = 10.0 * log10(in[1] / out[1]), loss = 10.0 * log10(in[0] / out[0]);
		printf("channel %d: noise alone %.1f dB quieter; voice stretches %+.2f dB\n", c, nr, -loss);
		*worst_nr = fmin(*worst_nr, nr);
		*worst_loss = fmax(*worst_loss, loss);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(1);
	const char *want = getenv("GPUFIR_TEST_BACKEND");
	int gpu = !(want && strcmp(want, "cpu") == 0);
	if (gpu)
		gf_test_need_gpu();
	else
		printf("device: the CPU (GPUFIR_TEST_BACKEND=cpu)\n");
	uint64_t rng = gf_test_seed("test_daemon_suppress_gpu");
	gf_daemon_init(&dm, "daemon-suppress-gpu");
	x = malloc(sizeof(float) * MAX_FRAMES * CH);
	rec = calloc(MAX_FRAMES * CH, sizeof(float));
	CHECK(x && rec);
	make_input(&rng);
	gf_daemon_tap_init(&tap, x, rec, MAX_FRAMES, CH, 0);
	write_conf(gpu ? "cuda" : "cpu");

	jack_client_t *jc = gf_daemon_jack_client(&dm, "gpufir-suppress-gpu", RATE, BLOCK, &tap);
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, 1, 60.0, "start-up");
	gf_daemon_connect_ports(&dm, jc, &tap);
	size_t m_conn = atomic_load_explicit(&tap.rec_pos, memory_order_acquire);
	char st[GF_STATUS_MAX];
	gf_daemon_query_status(&dm, st, sizeof(st));
	const char *where = gpu ? "\nsuppressor_where: 8 channels on the GPU\n"
				: "\nsuppressor_where: 8 channels on the CPU\n";
	if (!gf_daemon_status_has(st, gpu ? "\nbackend: cuda\n" : "\nbackend: cpu\n") ||
	    !gf_daemon_status_has(st, "\nsuppressor: nr\n") || !gf_daemon_status_has(st, where) ||
	    gf_daemon_status_num(st, "suppressor_gpu_channels") != (gpu ? CH : 0))
		gf_daemon_die(&dm, "the status does not put the suppressor where it should run");
	gf_daemon_idle_ms(&dm, 1000 * (ADAPT_S + MEASURE_S) + 1000);

	gf_daemon_query_status(&dm, st, sizeof(st));
	size_t m_end = atomic_load_explicit(&tap.rec_pos, memory_order_acquire);
	long total = gf_daemon_status_num(st, "total_latency_frames");
	printf("status: %s; suppress_gpu_failures %ld, engine_errors %ld, engine_late_blocks %ld, "
	       "output_underflows %ld, total latency %ld frames\n",
	       gpu ? "8 channels on the GPU" : "8 channels on the CPU",
	       gf_daemon_status_num(st, "suppress_gpu_failures"), gf_daemon_status_num(st, "engine_errors"),
	       gf_daemon_status_num(st, "engine_late_blocks"), gf_daemon_status_num(st, "output_underflows"),
	       total);
	if (!gf_daemon_status_has(st, where) || gf_daemon_status_num(st, "suppress_gpu_failures") != 0 ||
	    gf_daemon_status_num(st, "engine_errors") != 0)
		gf_daemon_die(&dm, "the suppressor left the GPU, or a block failed");
	gf_daemon_terminate(&dm, 20.0, "");
	jack_deactivate(jc);
	jack_client_close(jc);

	/* The path's delay: the stream's and the suppressor's latency (status) plus JACK's round trip,
	 * within two periods: the measure's windows leave that much either side. */
	CHECK(total > 0);
	size_t d = (size_t)total + BLOCK;
	size_t m0 = m_conn + (size_t)ADAPT_S * RATE, m1 = m_end - d - GUARD;
	CHECK(m1 > m0 + 4 * SEG);
	double nr, loss;
	measure(m0, m1, d, &nr, &loss);
	printf("worst channel: noise alone %.1f dB quieter (at least %.0f), voice %+.2f dB (at most %.0f "
	       "lost)\n",
	       nr, MIN_NR_DB, -loss, MAX_VOICE_LOSS_DB);
	if (!(nr >= MIN_NR_DB) || !(loss <= MAX_VOICE_LOSS_DB))
		gf_daemon_die(&dm, "the recording is not denoised");
	gf_daemon_finish(&dm);
	free(x);
	free(rec);
	puts("test_daemon_suppress_gpu: ok");
	return 0;
}
