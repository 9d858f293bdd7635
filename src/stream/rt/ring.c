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

/* Split [index, index + frames) into the part before the end of the storage and the rest. */
static void make_vectors(const struct gf_ring *r, uint32_t index, uint32_t frames, struct gf_ring_vec vec[2])
{
	uint32_t off = index & r->mask;
	uint32_t first = r->capacity - off;
	if (first > frames)
		first = frames;
	vec[0].data = r->data + (size_t)off * r->channels;
	vec[0].frames = first;
	vec[1].data = r->data;
	vec[1].frames = frames - first;
}

/* ---- writer ---- */

uint32_t gf_ring_write_index(const struct gf_ring *r)
{
	return atomic_load_explicit(&r->write_index, memory_order_relaxed);
}

uint32_t gf_ring_write_space(const struct gf_ring *r)
{
	uint32_t w = atomic_load_explicit(&r->write_index, memory_order_relaxed);
	/* acquire: the reader's loads from the slots it freed happen before we overwrite them */
	uint32_t rd = atomic_load_explicit(&r->read_index, memory_order_acquire);
	int32_t fill = (int32_t)(w - rd);
	return fill <= 0 ? r->capacity : r->capacity - (uint32_t)fill;
}

uint32_t gf_ring_write_lag(const struct gf_ring *r)
{
	uint32_t w = atomic_load_explicit(&r->write_index, memory_order_relaxed);
	uint32_t rd = atomic_load_explicit(&r->read_index, memory_order_acquire);
	int32_t ahead = (int32_t)(rd - w);
	return ahead > 0 ? (uint32_t)ahead : 0;
}

uint32_t gf_ring_write_vector(struct gf_ring *r, struct gf_ring_vec vec[2])
{
	uint32_t space = gf_ring_write_space(r);
	make_vectors(r, atomic_load_explicit(&r->write_index, memory_order_relaxed), space, vec);
	return space;
}

void gf_ring_write_advance(struct gf_ring *r, uint32_t frames)
{
	uint32_t w = atomic_load_explicit(&r->write_index, memory_order_relaxed);
	/* release: the frames stored into the slots are visible before the new index */
	atomic_store_explicit(&r->write_index, w + frames, memory_order_release);
}

uint32_t gf_ring_stage(struct gf_ring *r, const float *src, uint32_t frames)
{
	struct gf_ring_vec vec[2];
	uint32_t n = gf_ring_write_vector(r, vec);
	if (n > frames)
		n = frames;
	size_t ch = r->channels;
	uint32_t n0 = n < vec[0].frames ? n : vec[0].frames;
	if (src) {
		memcpy(vec[0].data, src, (size_t)n0 * ch * sizeof(float));
		memcpy(vec[1].data, src + (size_t)n0 * ch, (size_t)(n - n0) * ch * sizeof(float));
	} else {
		memset(vec[0].data, 0, (size_t)n0 * ch * sizeof(float));
		memset(vec[1].data, 0, (size_t)(n - n0) * ch * sizeof(float));
	}
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
	uint32_t rd = atomic_load_explicit(&r->read_index, memory_order_relaxed);
	/* acquire: pairs with the writer's release, so the frames are visible */
	uint32_t w = atomic_load_explicit(&r->write_index, memory_order_acquire);
	int32_t fill = (int32_t)(w - rd);
	return fill > 0 ? (uint32_t)fill : 0;
}

uint32_t gf_ring_read_vector(struct gf_ring *r, struct gf_ring_vec vec[2])
{
	uint32_t avail = gf_ring_read_space(r);
	make_vectors(r, atomic_load_explicit(&r->read_index, memory_order_relaxed), avail, vec);
	return avail;
}

void gf_ring_read_advance(struct gf_ring *r, uint32_t frames)
{
	uint32_t rd = atomic_load_explicit(&r->read_index, memory_order_relaxed);
	/* release: our loads from the slots complete before the writer may reuse them */
	atomic_store_explicit(&r->read_index, rd + frames, memory_order_release);
}

void gf_ring_read_seek(struct gf_ring *r, uint32_t index)
{
	atomic_store_explicit(&r->read_index, index, memory_order_release);
}

uint32_t gf_ring_read(struct gf_ring *r, float *dst, uint32_t frames)
{
	struct gf_ring_vec vec[2];
	uint32_t n = gf_ring_read_vector(r, vec);
	if (n > frames)
		n = frames;
	size_t ch = r->channels;
	uint32_t n0 = n < vec[0].frames ? n : vec[0].frames;
	memcpy(dst, vec[0].data, (size_t)n0 * ch * sizeof(float));
	memcpy(dst + (size_t)n0 * ch, vec[1].data, (size_t)(n - n0) * ch * sizeof(float));
	gf_ring_read_advance(r, n);
	return n;
}
