/*
 * The I/O floor of offline filtering: read a sound file with libsndfile and
 * write it back in the same format, in 65536-frame float chunks (what
 * `gpufir -i -o` does minus the filter). Prints the time it took.
 *
 * Usage: bench_sfcopy IN OUT
 */
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHUNK 65536

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s IN OUT\n", argv[0]);
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	SF_INFO info = {0};
	SNDFILE *in = sf_open(argv[1], SFM_READ, &info);
	if (!in) {
		fprintf(stderr, "%s: %s\n", argv[1], sf_strerror(NULL));
		return 1;
	}
	SF_INFO oinfo = info;
	SNDFILE *out = sf_open(argv[2], SFM_WRITE, &oinfo);
	if (!out) {
		fprintf(stderr, "%s: %s\n", argv[2], sf_strerror(NULL));
		sf_close(in);
		return 1;
	}
	float *buf = malloc((size_t)CHUNK * info.channels * sizeof(float));
	if (!buf)
		return 1;
	sf_count_t n, total = 0;
	while ((n = sf_readf_float(in, buf, CHUNK)) > 0) {
		if (sf_writef_float(out, buf, n) != n) {
			fprintf(stderr, "%s: %s\n", argv[2], sf_strerror(out));
			return 1;
		}
		total += n;
	}
	sf_close(in);
	if (sf_close(out) != 0)
		return 1;
	free(buf);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	printf("bench_sfcopy: %lld frames x %d ch in %.3f s (%.1f Msamples/s)\n", (long long)total,
	       info.channels, s, (double)total * info.channels / s / 1e6);
	return 0;
}
