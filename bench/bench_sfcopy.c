/*
 * The I/O floor of offline filtering: read a sound file with libsndfile and
 * write it back in the same format, in 65536-frame float chunks (what
 * `gpufir -i -o` does minus the filter). Prints the time it took.
 *
 * Usage: bench_sfcopy IN OUT
 *        bench_sfcopy -d OUTDIR [-j THREADS] IN...
 * The second form copies a corpus in one process, THREADS files at a time
 * (default 1): the floor of a `gpufir --batch` run.
 */
#include <pthread.h>
#include <sndfile.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

#define CHUNK 65536

/* Copy one file; @return frames x channels copied, or -1. */
static long long copy_file(const char *inp, const char *outp)
{
	SF_INFO info = {0};
	SNDFILE *in = sf_open(inp, SFM_READ, &info);
	if (!in) {
		fprintf(stderr, "%s: %s\n", inp, sf_strerror(NULL));
		return -1;
	}
	SF_INFO oinfo = info;
	SNDFILE *out = sf_open(outp, SFM_WRITE, &oinfo);
	if (!out) {
		fprintf(stderr, "%s: %s\n", outp, sf_strerror(NULL));
		sf_close(in);
		return -1;
	}
	float *buf = malloc((size_t)CHUNK * info.channels * sizeof(float));
	long long total = 0;
	sf_count_t n;
	while (buf && (n = sf_readf_float(in, buf, CHUNK)) > 0) {
		if (sf_writef_float(out, buf, n) != n) {
			fprintf(stderr, "%s: %s\n", outp, sf_strerror(out));
			total = -1;
			break;
		}
		total += n * info.channels;
	}
	free(buf);
	sf_close(in);
	if (sf_close(out) != 0 || !buf)
		return -1;
	return total;
}

struct corpus {
	char **in;
	int n;
	const char *outdir;
	atomic_int next;
	atomic_llong samples;
	atomic_int failed;
};

static void *copier(void *arg)
{
	struct corpus *c = arg;
	int i;
	while ((i = atomic_fetch_add(&c->next, 1)) < c->n) {
		const char *base = strrchr(c->in[i], '/');
		base = base ? base + 1 : c->in[i];
		char out[4096];
		snprintf(out, sizeof(out), "%s/%s", c->outdir, base);
		long long s = copy_file(c->in[i], out);
		if (s < 0)
			atomic_fetch_add(&c->failed, 1);
		else
			atomic_fetch_add(&c->samples, s);
	}
	return NULL;
}

static int copy_corpus(int argc, char **argv)
{
	struct corpus c = {.outdir = argv[2]};
	int threads = 1, a = 3;
	if (argc > 4 && strcmp(argv[3], "-j") == 0) {
		threads = atoi(argv[4]);
		a = 5;
	}
	if (threads < 1 || threads > 1024 || a >= argc) {
		fprintf(stderr, "usage: %s -d OUTDIR [-j THREADS] IN...\n", argv[0]);
		return 2;
	}
	c.in = argv + a;
	c.n = argc - a;
	double t0 = gf_now_s();
	pthread_t *t = calloc((size_t)threads, sizeof(*t));
	for (int i = 0; t && i < threads; i++)
		pthread_create(&t[i], NULL, copier, &c);
	for (int i = 0; t && i < threads; i++)
		pthread_join(t[i], NULL);
	free(t);
	double s = gf_now_s() - t0;
	printf("bench_sfcopy: %d files, %lld samples, %d threads in %.3f s (%.1f Msamples/s)\n", c.n,
	       (long long)c.samples, threads, s, (double)c.samples / s / 1e6);
	return c.failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "-d") == 0)
		return copy_corpus(argc, argv);
	if (argc != 3) {
		fprintf(stderr, "usage: %s IN OUT\n       %s -d OUTDIR [-j THREADS] IN...\n", argv[0],
			argv[0]);
		return 2;
	}
	double t0 = gf_now_s();
	long long total = copy_file(argv[1], argv[2]);
	if (total < 0)
		return 1;
	double s = gf_now_s() - t0;
	printf("bench_sfcopy: %lld samples in %.3f s (%.1f Msamples/s)\n", total, s, (double)total / s / 1e6);
	return 0;
}
