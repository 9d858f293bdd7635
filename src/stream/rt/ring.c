#include "ring.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "pinned.h"

struct gf_ring {
	/* Each index on its own cache line: the two sides never share a line. */
	alignas(64) _Atomic uint32_t write_index; /* stored by the writer only */
	alignas(64) _Atomic uint32_t read_index;  /* stored by the reader only */
	alignas(64) float *data;
	uint32_t capacity; /* frames, power of two */
	uint32_t mask;
	uint32_t channels;
	size_t bytes;
};

int gf_ring_new(struct gf_ring **out, uint32_t min_frames, uint32_t channels)
{
	*out = NULL;
	if (min_frames == 0 || min_frames > (1u << 30) || channels == 0 || channels > 4096)
		return GF_E_INVAL;
	uint32_t cap = 1;
	while (cap < min_frames)
		cap <<= 1;
	struct gf_ring *r = aligned_alloc(64, sizeof(*r));
	if (!r)
		return GF_E_NOMEM;
	memset(r, 0, sizeof(*r));
	r->capacity = cap;
	r->mask = cap - 1;
	r->channels = channels;
	r->bytes = (size_t)cap * channels * sizeof(float);
	r->data = gf_pinned_alloc(r->bytes);
	if (!r->data) {
		gf_ring_free(r);
		return GF_E_NOMEM;
	}
	*out = r;
	return 0;
}

void gf_ring_free(struct gf_ring *r)
{
	if (!r)
		return;
	gf_pinned_free(r->data, r->bytes);
	free(r);
}

uint32_t gf_ring_capacity(const struct gf_ring *r)
{
	return r->capacity;
}

uint32_t gf_ring_channels(const struct gf_ring *r)
{
	return r->channels;
}

void gf_ring_reset(struct gf_ring *r, uint32_t index)
{
	memset(r->data, 0, r->bytes);
	atomic_store(&r->write_index, index);
	atomic_store(&r->read_index, index);
}

/* Split [index, index + frames) into the part before the end of the storage and the rest;
 * @return @p frames. */
static uint32_t make_vectors(const struct gf_ring *r, uint32_t index, uint32_t frames,
			     struct gf_ring_vec vec[2])
{
	uint32_t off = index & r->mask;
	uint32_t first = r->capacity - off;
	if (first > frames)
		first = frames;
	vec[0].data = r->data + (size_t)off * r->channels;
	vec[0].frames = first;
	vec[1].data = r->data;
	vec[1].frames = frames - first;
	return frames;
}

/* Frames @p to is ahead of @p from, 0 if it is not: the indices wrap, so their distance is signed. */
static uint32_t ahead(uint32_t from, uint32_t to)
{
	int32_t d = (int32_t)(to - from);
	return d > 0 ? (uint32_t)d : 0;
}

static uint32_t at_most(uint32_t n, uint32_t limit)
{
	return n < limit ? n : limit;
}

/* One side moves its own index on: release, so that its stores to the slots (the writer) or its
 * loads from them (the reader) happen before the other side sees the new index. */
static void advance(_Atomic uint32_t *own, uint32_t frames)
{
	uint32_t i = atomic_load_explicit(own, memory_order_relaxed);
	atomic_store_explicit(own, i + frames, memory_order_release);
}

/* @p n frames between @p vec and a contiguous buffer: out of the ring into @p dst, else into it
 * from @p src (NULL: zeros). */
static void copy_span(const struct gf_ring *r, const struct gf_ring_vec vec[2], uint32_t n, const float *src,
		      float *dst)
{
	uint32_t n0 = at_most(n, vec[0].frames);
	size_t b0 = (size_t)n0 * r->channels * sizeof(float),
	       b1 = (size_t)(n - n0) * r->channels * sizeof(float);
	if (dst) {
		memcpy(dst, vec[0].data, b0);
		memcpy((char *)dst + b0, vec[1].data, b1);
	} else if (src) {
		memcpy(vec[0].data, src, b0);
		memcpy(vec[1].data, (const char *)src + b0, b1);
	} else {
		memset(vec[0].data, 0, b0);
		memset(vec[1].data, 0, b1);
	}
}

/* ---- writer ---- */

uint32_t gf_ring_write_index(const struct gf_ring *r)
{
	return atomic_load_explicit(&r->write_index, memory_order_relaxed);
}

/* The reader's index, as the writer sees it. */
static uint32_t reader_pos(const struct gf_ring *r)
{
	/* acquire: the reader's loads from the slots it freed happen before we overwrite them */
	return atomic_load_explicit(&r->read_index, memory_order_acquire);
}

uint32_t gf_ring_write_space(const struct gf_ring *r)
{
	return r->capacity - ahead(reader_pos(r), gf_ring_write_index(r));
}

uint32_t gf_ring_write_lag(const struct gf_ring *r)
{
	return ahead(gf_ring_write_index(r), reader_pos(r));
}

uint32_t gf_ring_write_vector(struct gf_ring *r, struct gf_ring_vec vec[2])
{
	return make_vectors(r, gf_ring_write_index(r), gf_ring_write_space(r), vec); /* own index: stable */
}

void gf_ring_write_advance(struct gf_ring *r, uint32_t frames)
{
	advance(&r->write_index, frames);
}

uint32_t gf_ring_stage(struct gf_ring *r, const float *src, uint32_t frames)
{
	struct gf_ring_vec vec[2];
	uint32_t n = at_most(gf_ring_write_vector(r, vec), frames);
	copy_span(r, vec, n, src, NULL);
	return n;
}

static uint32_t write_common(struct gf_ring *r, const float *src, uint32_t frames)
{
	uint32_t n = gf_ring_stage(r, src, frames);
	gf_ring_write_advance(r, n);
	return n;
}

uint32_t gf_ring_write(struct gf_ring *r, const float *src, uint32_t frames)
{
	return write_common(r, src, frames);
}

uint32_t gf_ring_write_zeros(struct gf_ring *r, uint32_t frames)
{
	return write_common(r, NULL, frames);
}

/* ---- reader ---- */

uint32_t gf_ring_read_index(const struct gf_ring *r)
{
	return atomic_load_explicit(&r->read_index, memory_order_relaxed);
}

uint32_t gf_ring_read_space(const struct gf_ring *r)
{
	/* acquire: pairs with the writer's release, so the frames are visible */
	uint32_t w = atomic_load_explicit(&r->write_index, memory_order_acquire);
	return ahead(gf_ring_read_index(r), w);
}

uint32_t gf_ring_read_vector(struct gf_ring *r, struct gf_ring_vec vec[2])
{
	return make_vectors(r, gf_ring_read_index(r), gf_ring_read_space(r), vec); /* own index: stable */
}

void gf_ring_read_advance(struct gf_ring *r, uint32_t frames)
{
	advance(&r->read_index, frames);
}

void gf_ring_read_seek(struct gf_ring *r, uint32_t index)
{
	atomic_store_explicit(&r->read_index, index, memory_order_release);
}

uint32_t gf_ring_read(struct gf_ring *r, float *dst, uint32_t frames)
{
	struct gf_ring_vec vec[2];
	uint32_t n = at_most(gf_ring_read_vector(r, vec), frames);
	copy_span(r, vec, n, NULL, dst);
	gf_ring_read_advance(r, n);
	return n;
}
