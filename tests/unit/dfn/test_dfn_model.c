/*
 * The DeepFilterNet3 model file's loader: a well-formed file (built here,
 * weights made up) loads with every tensor where the table says; each way a
 * file can be wrong is refused with GF_E_FORMAT and a message naming what.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dfn_model.h"
#include "testutil.h"

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *src, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
		CHECK(b->p);
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void put_u32(struct buf *b, uint32_t v)
{
	unsigned char le[4] = {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24};
	put(b, le, 4);
}

#define SPEC_(id, nm, nd, a, b, c, d) {nm, nd, {a, b, c, d}},
static const struct {
	const char *name;
	uint32_t nd, dims[4];
} specs[DFN_T_COUNT] = {DFN_TENSORS(SPEC_)};

static const float config[DFN_CFG_COUNT] = {48000, 960, 480, 32, 96, 5, 2, 2, 1, 35, -15};

/* A well-formed file whose weight i of tensor t is t + i / 1e6; with the checksum when @p crc. */
static struct buf build(int crc)
{
	struct buf b = {0};
	put(&b, "GFDFN3\0\0", 8);
	put_u32(&b, DFN_MODEL_VERSION);
	put_u32(&b, DFN_T_COUNT);
	for (int t = 0; t < DFN_T_COUNT; t++) {
		put_u32(&b, (uint32_t)strlen(specs[t].name));
		put(&b, specs[t].name, strlen(specs[t].name));
		put_u32(&b, specs[t].nd);
		size_t n = 1;
		for (uint32_t i = 0; i < specs[t].nd; i++) {
			put_u32(&b, specs[t].dims[i]);
			n *= specs[t].dims[i];
		}
		for (size_t i = 0; i < n; i++) {
			float v = t == DFN_T_CONFIG ? config[i] : (float)t + (float)i / 1e6f;
			put(&b, &v, 4);
		}
	}
	if (crc)
		put_u32(&b, dfn_model_crc32(b.p, b.len));
	return b;
}

static void reseal(struct buf *b)
{
	b->len -= 4;
	put_u32(b, dfn_model_crc32(b->p, b->len));
}

/* Where tensor @p t's name (header) or its first weight (data) starts. */
static size_t offset_of(const struct buf *b, int t, int data)
{
	size_t off = 16;
	for (int i = 0;; i++) {
		size_t name = off;
		off += 4 + strlen(specs[i].name) + 4 + 4 * specs[i].nd;
		if (i == t)
			return data ? off : name;
		size_t n = 1;
		for (uint32_t k = 0; k < specs[i].nd; k++)
			n *= specs[i].dims[k];
		off += 4 * n;
		CHECK(off < b->len);
	}
}

static void expect_refused(struct buf *b, const char *what, const char *needle)
{
	struct dfn_model *m = NULL;
	struct gf_errbuf eb = {{0}};
	int err = dfn_model_parse(b->p, b->len, "model.dfn", &m, &eb);
	printf("%s: %s\n", what, eb.msg);
	CHECK(err == GF_E_FORMAT && m == NULL);
	CHECK(strstr(eb.msg, "model.dfn") && strstr(eb.msg, needle));
	free(b->p);
}

static void test_good(void)
{
	struct buf b = build(1);
	struct dfn_model *m = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(dfn_model_parse(b.p, b.len, "model.dfn", &m, &eb), &eb);
	CHECK(m->t[DFN_T_CONFIG][DFN_CFG_HOP_SIZE] == 480.0f);
	CHECK(m->n[DFN_T_ENC_GRU0_W] == 768 * 256);
	CHECK(m->t[DFN_T_DF_OUT][5] == (float)DFN_T_DF_OUT + 5 / 1e6f);
	CHECK(strcmp(dfn_tensor_name(DFN_T_ERB_OUT_W), "erb.conv0_out.w") == 0);
	dfn_model_free(m);
	free(b.p);
}

static void test_refused(void)
{
	struct buf b = build(1);
	b.p[0] = 'X';
	expect_refused(&b, "magic", "not a gpufir DeepFilterNet3 model file");
	b = build(1);
	b.p[8] = 2;
	reseal(&b);
	expect_refused(&b, "version", "format version 2");
	b = build(1);
	b.p[b.len / 2] ^= 0x10;
	expect_refused(&b, "flipped bit", "checksum mismatch");
	b = build(1);
	b.len -= 1000;
	expect_refused(&b, "truncated", "checksum mismatch");
	b = build(1);
	b.p[offset_of(&b, DFN_T_ERB_GRU1_R, 0) + 4] = 'x';
	reseal(&b);
	expect_refused(&b, "renamed tensor", "expected 'erb.emb_gru1.r'");
	b = build(1);
	b.p[offset_of(&b, DFN_T_DF_SKIP, 1) - 4] = 17; /* its last dimension, 16 */
	reseal(&b);
	expect_refused(&b, "reshaped tensor", "'df.skip.w' dimension 2 is 17");
	b = build(1);
	float nan = NAN;
	memcpy(b.p + offset_of(&b, DFN_T_ENC_LSNR_B, 1), &nan, 4);
	reseal(&b);
	expect_refused(&b, "NaN weight", "'enc.lsnr.b' holds a non-finite weight");
	b = build(1);
	float sr = 44100.0f;
	memcpy(b.p + offset_of(&b, DFN_T_CONFIG, 1), &sr, 4);
	reseal(&b);
	expect_refused(&b, "other sample rate", "[df] sr is 44100");
	b = build(0);
	put_u32(&b, 0);
	put_u32(&b, dfn_model_crc32(b.p, b.len));
	expect_refused(&b, "trailing bytes", "4 bytes after the last tensor");
	b = build(1);
	b.len = 10;
	expect_refused(&b, "short file", "not a gpufir DeepFilterNet3 model file");
}

static void test_load_missing(void)
{
	struct dfn_model *m = NULL;
	struct gf_errbuf eb = {{0}};
	CHECK(dfn_model_load("/nonexistent/DeepFilterNet3.dfn", &m, &eb) == GF_E_IO && !m);
	CHECK(strstr(eb.msg, "/nonexistent/DeepFilterNet3.dfn"));
}

int main(void)
{
	test_good();
	test_refused();
	test_load_missing();
	printf("ok\n");
	return 0;
}
