/* WAV recorder: frames queued in a ring come out in the file bit-exact; a
 * write error (here the file size limit, as a full disk would) stops the
 * recording with one counted error, the producer sees it inactive, and the
 * file holds a valid WAV of what was written. */
#include <signal.h>
#include <sndfile.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "recorder.h"
#include "ring.h"
#include "sndutil.h"
#include "testutil.h"

#define CH 2
#define RATE 48000
#define CHUNK 64

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Queue @p frames frames of @p x in CHUNK pieces as an audio worker would
 * (never blocking: waits only for ring space). Stops early if the recorder
 * goes inactive. @return frames queued. */
static uint32_t produce(struct gf_recorder *rec, struct gf_ring *ring, const float *x, uint32_t frames)
{
	uint32_t done = 0;
	while (done < frames && gf_recorder_active(rec)) {
		uint32_t n = frames - done < CHUNK ? frames - done : CHUNK;
		if (gf_ring_write_space(ring) < n) {
			gf_recorder_kick(rec);
			sleep_ms(1);
			continue;
		}
		CHECK(gf_ring_write(ring, x + (size_t)done * CH, n) == n);
		done += n;
	}
	return done;
}

/* A recorder of a fresh ring into @p path, started. */
static struct gf_recorder *start_recorder(const char *path, struct gf_ring **ring)
{
	struct gf_recorder *rec;
	struct gf_errbuf eb = {{0}};
	CHECK_OK(gf_ring_new(ring, 4096, CH));
	CHECK_OK_EB(gf_recorder_new(&rec, path, RATE, *ring, &eb), &eb);
	CHECK_OK_EB(gf_recorder_start(rec, &eb), &eb);
	return rec;
}

/* The recording: a float WAV of CH channels at RATE. */
static float *read_back(const char *path, uint32_t *frames)
{
	SF_INFO info;
	float *y = gf_test_read_sound(path, &info, 1);
	CHECK(info.channels == CH && info.samplerate == RATE);
	CHECK((info.format & SF_FORMAT_SUBMASK) == SF_FORMAT_FLOAT);
	*frames = (uint32_t)info.frames;
	return y;
}

static void test_exact(const char *dir, const float *x, uint32_t frames)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/exact.wav", dir);
	struct gf_ring *ring;
	struct gf_recorder *rec = start_recorder(path, &ring);
	CHECK(produce(rec, ring, x, frames) == frames);
	gf_recorder_stop(rec);
	CHECK(gf_recorder_errors(rec) == 0 && gf_recorder_frames(rec) == frames);
	gf_recorder_free(rec);
	uint32_t got;
	float *y = read_back(path, &got);
	CHECK(got == frames);
	CHECK(memcmp(x, y, (size_t)frames * CH * sizeof(float)) == 0);
	free(y);
	gf_ring_free(ring);
	unlink(path);

	/* A file that cannot be created is an error naming it. */
	snprintf(path, sizeof(path), "%s/no/such/dir.wav", dir);
	struct gf_errbuf eb = {{0}};
	CHECK_OK(gf_ring_new(&ring, 64, CH));
	CHECK(gf_recorder_new(&rec, path, RATE, ring, &eb) == GF_E_IO && !rec);
	CHECK(strstr(eb.msg, path));
	gf_ring_free(ring);
}

static void test_write_error(const char *dir, const float *x, uint32_t frames)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/full.wav", dir);
	/* Writes past 256 KiB fail with EFBIG, as on a full disk. */
	struct rlimit old, lim;
	CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
	lim = old;
	lim.rlim_cur = 256 * 1024;
	signal(SIGXFSZ, SIG_IGN);
	CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);

	struct gf_ring *ring;
	struct gf_recorder *rec = start_recorder(path, &ring);
	uint32_t queued = produce(rec, ring, x, frames);
	gf_recorder_stop(rec);
	CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
	uint64_t written = gf_recorder_frames(rec);
	printf("write error: queued %u of %u frames, %llu written, %llu errors\n", queued, frames,
	       (unsigned long long)written, (unsigned long long)gf_recorder_errors(rec));
	CHECK(gf_recorder_errors(rec) == 1);
	CHECK(!gf_recorder_active(rec));
	CHECK(queued < frames && written < queued);
	gf_recorder_free(rec);

	uint32_t got;
	float *y = read_back(path, &got); /* a valid WAV ... */
	printf("write error: the file holds %u frames\n", got);
	CHECK(got > 0 && got <= written);
	/* ... holding exactly the frames before the failure */
	CHECK(memcmp(x, y, (size_t)got * CH * sizeof(float)) == 0);
	free(y);
	gf_ring_free(ring);
	unlink(path);
}

int main(void)
{
	uint64_t seed = gf_test_seed("test_recorder");
	uint32_t frames = 3 * RATE;
	float *x = malloc((size_t)frames * CH * sizeof(float));
	CHECK(x);
	gf_test_fill_noise(x, (size_t)frames * CH, &seed);
	char *dir = gf_test_tmpdir("recorder");
	test_exact(dir, x, frames);
	test_write_error(dir, x, frames);
	rmdir(dir);
	free(dir);
	free(x);
	printf("test_recorder: ok\n");
	return 0;
}
