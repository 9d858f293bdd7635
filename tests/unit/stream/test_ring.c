/* SPSC ring: single-thread semantics (vectors, wrap of the storage and of the
 * uint32 indices, underrun positions, seek) and a two-thread stress test with
 * a counting sequence in random chunk sizes (PipeWire's stress-ringbuffer). */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "ring.h"
#include "testutil.h"

#define CH 3

static float enc(uint32_t v)
{
	float f;
	memcpy(&f, &v, sizeof(f));
	return f;
}

static uint32_t dec(float f)
{
	uint32_t v;
	memcpy(&v, &f, sizeof(v));
	return v;
}

static void fill_frames(float *x, uint32_t first, uint32_t frames)
{
	for (uint32_t i = 0; i < frames; i++)
		for (uint32_t c = 0; c < CH; c++)
			x[(size_t)i * CH + c] = enc((first + i) * CH + c);
}

static void check_frames(const float *x, uint32_t first, uint32_t frames)
{
	for (uint32_t i = 0; i < frames; i++)
		for (uint32_t c = 0; c < CH; c++)
			CHECK(dec(x[(size_t)i * CH + c]) == (first + i) * CH + c);
}

static void test_basic(void)
{
	struct gf_ring *r;
	CHECK(gf_ring_new(&r, 0, CH) == GF_E_INVAL);
	CHECK_OK(gf_ring_new(&r, 100, CH));
	CHECK(gf_ring_capacity(r) == 128 && gf_ring_channels(r) == CH);
	CHECK(gf_ring_read_space(r) == 0 && gf_ring_write_space(r) == 128);

	/* Start 50 frames before the uint32 wrap (and so before the storage end). */
	uint32_t start = UINT32_MAX - 49;
	gf_ring_reset(r, start);
	float buf[200 * CH];
	fill_frames(buf, 0, 200);
	CHECK(gf_ring_write(r, buf, 200) == 128); /* full: only capacity fits */
	CHECK(gf_ring_write_space(r) == 0 && gf_ring_read_space(r) == 128);

	struct gf_ring_vec v[2];
	CHECK(gf_ring_read_vector(r, v) == 128);
	CHECK(v[0].frames == 50 && v[1].frames == 78);
	check_frames(v[0].data, 0, 50);
	check_frames(v[1].data, 50, 78);
	gf_ring_read_advance(r, 60);
	CHECK(gf_ring_read_index(r) == start + 60); /* crossed UINT32_MAX */
	CHECK(gf_ring_write_space(r) == 60);

	/* Zero-copy write of the next 60 frames through the vectors. */
	CHECK(gf_ring_write_vector(r, v) == 60);
	CHECK(v[0].frames + v[1].frames == 60);
	fill_frames(v[0].data, 128, v[0].frames);
	fill_frames(v[1].data, 128 + v[0].frames, v[1].frames);
	gf_ring_write_advance(r, 60);
	float out[128 * CH];
	CHECK(gf_ring_read(r, out, 1000) == 128);
	check_frames(out, 60, 128);
	CHECK(gf_ring_read_space(r) == 0);
	gf_ring_free(r);
	gf_ring_free(NULL);
}

/* Staged frames are in the slots but invisible until published, across the wrap. */
static void test_stage(void)
{
	struct gf_ring *r;
	CHECK_OK(gf_ring_new(&r, 64, CH));
	gf_ring_reset(r, UINT32_MAX - 9);
	float buf[80 * CH];
	fill_frames(buf, 0, 80);
	CHECK(gf_ring_stage(r, buf, 80) == 64); /* only the capacity fits */
	CHECK(gf_ring_read_space(r) == 0 && gf_ring_write_space(r) == 64);
	gf_ring_write_advance(r, 40); /* publish part of it */
	float out[64 * CH];
	CHECK(gf_ring_read(r, out, 64) == 40);
	check_frames(out, 0, 40);
	CHECK(gf_ring_stage(r, NULL, 16) == 16); /* silence */
	CHECK(gf_ring_read_space(r) == 0);
	gf_ring_write_advance(r, 16);
	CHECK(gf_ring_read(r, out, 64) == 16);
	for (uint32_t i = 0; i < 16 * CH; i++)
		CHECK(out[i] == 0.0f);
	gf_ring_free(r);
}

/* Reader runs past the writer (underrun): positions stay absolute. */
static void test_underrun_positions(void)
{
	struct gf_ring *r;
	CHECK_OK(gf_ring_new(&r, 64, CH));
	gf_ring_reset(r, UINT32_MAX - 9);
	float buf[64 * CH], out[64 * CH];
	fill_frames(buf, 0, 64);
	CHECK(gf_ring_write(r, buf, 16) == 16);
	CHECK(gf_ring_read(r, out, 16) == 16);
	check_frames(out, 0, 16);
	/* The reader plays 24 frames of silence: it advances past the writer. */
	CHECK(gf_ring_read_space(r) == 0);
	gf_ring_read_advance(r, 24);
	CHECK(gf_ring_read_space(r) == 0);
	CHECK(gf_ring_write_lag(r) == 24);
	CHECK(gf_ring_write_space(r) == 64);
	/* The writer arrives late with frames 16..47: it drops the 24 already played. */
	gf_ring_write_advance(r, gf_ring_write_lag(r));
	CHECK(gf_ring_write_lag(r) == 0);
	CHECK(gf_ring_write(r, buf + 40 * CH, 8) == 8);
	CHECK(gf_ring_read(r, out, 64) == 8);
	check_frames(out, 40, 8);

	/* Seek back: a reader joining 5 frames behind reads 5 zero frames first. */
	gf_ring_reset(r, 1000);
	CHECK(gf_ring_write(r, buf, 10) == 10);
	gf_ring_read_seek(r, 995);
	CHECK(gf_ring_read_space(r) == 15);
	CHECK(gf_ring_write_space(r) == 64 - 15);
	CHECK(gf_ring_read(r, out, 64) == 15);
	for (int i = 0; i < 5 * CH; i++)
		CHECK(out[i] == 0.0f);
	check_frames(out + 5 * CH, 0, 10);
	gf_ring_free(r);
}

struct stress {
	struct gf_ring *r;
	uint32_t total;
	uint64_t seed;
	uint32_t max_chunk;
};

static uint32_t rand_chunk(uint64_t *s, uint32_t max)
{
	return 1 + (uint32_t)((gf_test_randf(s) + 1.0f) * 0.5f * (float)max) % max;
}

static void *writer(void *arg)
{
	struct stress *st = arg;
	uint64_t s = st->seed;
	float *tmp = malloc((size_t)st->max_chunk * CH * sizeof(float));
	CHECK(tmp);
	uint32_t done = 0, round = 0;
	while (done < st->total) {
		uint32_t want = rand_chunk(&s, st->max_chunk);
		if (want > st->total - done)
			want = st->total - done;
		uint32_t n;
		if (round++ & 1) { /* copying API */
			fill_frames(tmp, done, want);
			n = gf_ring_write(st->r, tmp, want);
		} else { /* zero-copy API */
			struct gf_ring_vec v[2];
			n = gf_ring_write_vector(st->r, v);
			n = n < want ? n : want;
			uint32_t n0 = n < v[0].frames ? n : v[0].frames;
			fill_frames(v[0].data, done, n0);
			fill_frames(v[1].data, done + n0, n - n0);
			gf_ring_write_advance(st->r, n);
		}
		done += n;
		if (n == 0)
			sched_yield();
	}
	free(tmp);
	return NULL;
}

static void stress(uint32_t capacity, uint32_t start, uint32_t total, uint64_t seed)
{
	struct stress st = {.total = total, .seed = seed ^ 0x5555, .max_chunk = capacity + capacity / 2};
	CHECK_OK(gf_ring_new(&st.r, capacity, CH));
	gf_ring_reset(st.r, start);
	pthread_t t;
	CHECK(pthread_create(&t, NULL, writer, &st) == 0);
	uint64_t s = seed;
	float *tmp = malloc((size_t)st.max_chunk * CH * sizeof(float));
	CHECK(tmp);
	uint32_t done = 0, round = 0;
	while (done < total) {
		uint32_t want = rand_chunk(&s, st.max_chunk);
		uint32_t n;
		if (round++ & 1) {
			n = gf_ring_read(st.r, tmp, want);
			check_frames(tmp, done, n);
		} else {
			struct gf_ring_vec v[2];
			n = gf_ring_read_vector(st.r, v);
			n = n < want ? n : want;
			uint32_t n0 = n < v[0].frames ? n : v[0].frames;
			check_frames(v[0].data, done, n0);
			check_frames(v[1].data, done + n0, n - n0);
			gf_ring_read_advance(st.r, n);
		}
		done += n;
		if (n == 0)
			sched_yield();
	}
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(gf_ring_read_space(st.r) == 0);
	CHECK(gf_ring_read_index(st.r) == start + total);
	free(tmp);
	gf_ring_free(st.r);
}

int main(void)
{
	uint64_t seed = gf_test_seed("test_ring");
	test_basic();
	test_stage();
	test_underrun_positions();
	/* Millions of frames through small rings, crossing the uint32 wrap. */
	stress(64, UINT32_MAX - 1000, 2000000, seed);
	stress(1024, UINT32_MAX - 123457, 4000000, seed * 3 + 1);
	stress(4096, 0, 1000000, seed * 7 + 2);
	printf("test_ring: ok\n");
	return 0;
}
