/*
 * The DeepFilterNet3 weight file: read, check field by field, and copy into
 * one float allocation. Every way a file can be wrong (truncated, another
 * model, a flipped byte) ends in GF_E_FORMAT with the offending tensor named.
 */
#include "dfn_model.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "safe_file.h"

struct dfn_spec {
	const char *name;
	uint32_t ndim;
	uint32_t dims[4];
};

#define DFN_SPEC_(id, nm, nd, a, b, c, d) {nm, nd, {a, b, c, d}},
static const struct dfn_spec dfn_specs[DFN_T_COUNT] = {DFN_TENSORS(DFN_SPEC_)};
#undef DFN_SPEC_

/* The [df] settings the forward pass is written for (config.ini of DeepFilterNet3). */
static const float dfn_cfg_want[DFN_CFG_COUNT] = {48000, 960, 480, 32, 96, 5, 2, 2, 1, 35, -15};
static const char *const dfn_cfg_names[DFN_CFG_COUNT] = {
	"sr",		"fft_size",	    "hop_size", "nb_erb",   "nb_df",   "df_order",
	"df_lookahead", "min_nb_erb_freqs", "norm_tau", "lsnr_max", "lsnr_min"};

static const char dfn_magic[8] = {'G', 'F', 'D', 'F', 'N', '3', 0, 0};

const char *dfn_tensor_name(int id)
{
	return id >= 0 && id < DFN_T_COUNT ? dfn_specs[id].name : "?";
}

/* zlib's CRC-32 (polynomial 0xEDB88320), bit by bit: it runs once per load. */
uint32_t dfn_model_crc32(const void *buf, size_t n)
{
	const unsigned char *p = buf;
	uint32_t crc = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
	}
	return crc ^ 0xFFFFFFFFu;
}

struct dfn_reader {
	const unsigned char *p;
	size_t len, off;
};

static int rd_u32(struct dfn_reader *r, uint32_t *v)
{
	if (r->len - r->off < 4)
		return -1;
	const unsigned char *b = r->p + r->off;
	*v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	r->off += 4;
	return 0;
}

static size_t spec_count(const struct dfn_spec *s)
{
	size_t n = 1;
	for (uint32_t i = 0; i < s->ndim; i++)
		n *= s->dims[i];
	return n;
}

/* Tensor @p id's header: its name and shape must be exactly the spec's. */
static int read_header(struct dfn_reader *r, int id, const char *what, struct gf_errbuf *eb)
{
	const struct dfn_spec *s = &dfn_specs[id];
	uint32_t nlen, ndim, d;
	size_t want = strlen(s->name);
	if (rd_u32(r, &nlen) || nlen > r->len - r->off)
		goto truncated;
	if (nlen != want || memcmp(r->p + r->off, s->name, want) != 0) {
		gf_errbuf_set(eb, "%s: tensor %d is '%.*s', expected '%s' (not a DeepFilterNet3 model file?)",
			      what, id, (int)(nlen < 64 ? nlen : 64), (const char *)r->p + r->off, s->name);
		return GF_E_FORMAT;
	}
	r->off += nlen;
	if (rd_u32(r, &ndim))
		goto truncated;
	if (ndim != s->ndim) {
		gf_errbuf_set(eb, "%s: tensor '%s' has %u dimensions, expected %u", what, s->name, ndim,
			      s->ndim);
		return GF_E_FORMAT;
	}
	for (uint32_t i = 0; i < ndim; i++) {
		if (rd_u32(r, &d))
			goto truncated;
		if (d != s->dims[i]) {
			gf_errbuf_set(eb, "%s: tensor '%s' dimension %u is %u, expected %u", what, s->name, i,
				      d, s->dims[i]);
			return GF_E_FORMAT;
		}
	}
	return 0;
truncated:
	gf_errbuf_set(eb, "%s: truncated in tensor '%s'", what, s->name);
	return GF_E_FORMAT;
}

/* Tensor @p id's data into @p dst, each weight finite. */
static int read_data(struct dfn_reader *r, int id, float *dst, const char *what, struct gf_errbuf *eb)
{
	size_t n = spec_count(&dfn_specs[id]);
	if ((r->len - r->off) / 4 < n) {
		gf_errbuf_set(eb, "%s: truncated in the data of tensor '%s'", what, dfn_specs[id].name);
		return GF_E_FORMAT;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t u = 0;
		rd_u32(r, &u); /* cannot fail: the length was checked above */
		memcpy(&dst[i], &u, sizeof u);
		if (!isfinite(dst[i])) {
			gf_errbuf_set(eb, "%s: tensor '%s' holds a non-finite weight at %zu", what,
				      dfn_specs[id].name, i);
			return GF_E_FORMAT;
		}
	}
	return 0;
}

static int check_config(const float *cfg, const char *what, struct gf_errbuf *eb)
{
	for (int i = 0; i < DFN_CFG_COUNT; i++) {
		if (cfg[i] != dfn_cfg_want[i]) {
			gf_errbuf_set(eb, "%s: [df] %s is %g, the engine implements %g", what,
				      dfn_cfg_names[i], (double)cfg[i], (double)dfn_cfg_want[i]);
			return GF_E_FORMAT;
		}
	}
	return 0;
}

/* Magic, version, tensor count and the trailing CRC-32. */
static int check_envelope(struct dfn_reader *r, const char *what, struct gf_errbuf *eb)
{
	uint32_t version, count, crc;
	if (r->len < sizeof dfn_magic + 12 || memcmp(r->p, dfn_magic, sizeof dfn_magic) != 0) {
		gf_errbuf_set(eb,
			      "%s: not a gpufir DeepFilterNet3 model file (convert the ONNX model with "
			      "scripts/dfn-convert.py)",
			      what);
		return GF_E_FORMAT;
	}
	struct dfn_reader t = {r->p, r->len, r->len - 4};
	rd_u32(&t, &crc);
	if (crc != dfn_model_crc32(r->p, r->len - 4)) {
		gf_errbuf_set(eb, "%s: checksum mismatch: the file is corrupt or truncated", what);
		return GF_E_FORMAT;
	}
	r->len -= 4;
	r->off = sizeof dfn_magic;
	rd_u32(r, &version);
	rd_u32(r, &count);
	if (version != DFN_MODEL_VERSION) {
		gf_errbuf_set(eb, "%s: format version %u, this build reads version %d", what, version,
			      DFN_MODEL_VERSION);
		return GF_E_FORMAT;
	}
	if (count != DFN_T_COUNT) {
		gf_errbuf_set(eb, "%s: %u tensors, a DeepFilterNet3 model has %d", what, count, DFN_T_COUNT);
		return GF_E_FORMAT;
	}
	return 0;
}

int dfn_model_parse(const void *buf, size_t len, const char *what, struct dfn_model **out,
		    struct gf_errbuf *eb)
{
	struct dfn_reader r = {buf, len, 0};
	struct dfn_model *m = NULL;
	int err = check_envelope(&r, what, eb);
	if (err)
		return err;
	m = calloc(1, sizeof *m);
	size_t total = 0;
	for (int i = 0; i < DFN_T_COUNT; i++)
		total += spec_count(&dfn_specs[i]);
	if (!m || !(m->data = malloc(total * sizeof(float)))) {
		err = GF_E_NOMEM;
		goto fail;
	}
	m->total = total;
	float *dst = m->data;
	for (int i = 0; i < DFN_T_COUNT; i++) {
		if ((err = read_header(&r, i, what, eb)) || (err = read_data(&r, i, dst, what, eb)))
			goto fail;
		m->t[i] = dst;
		m->n[i] = spec_count(&dfn_specs[i]);
		dst += m->n[i];
	}
	if (r.off != r.len) {
		gf_errbuf_set(eb, "%s: %zu bytes after the last tensor", what, r.len - r.off);
		err = GF_E_FORMAT;
		goto fail;
	}
	if ((err = check_config(m->t[DFN_T_CONFIG], what, eb)))
		goto fail;
	*out = m;
	return 0;
fail:
	dfn_model_free(m);
	return err;
}

int dfn_model_load(const char *path, struct dfn_model **out, struct gf_errbuf *eb)
{
	char *buf = NULL;
	size_t len = 0;
	int err = gf_file_read_all(path, "DeepFilterNet3 model", DFN_MODEL_MAX_BYTES, &buf, &len, eb);
	if (err)
		return err;
	err = dfn_model_parse(buf, len, path, out, eb);
	free(buf);
	return err;
}

void dfn_model_free(struct dfn_model *m)
{
	if (!m)
		return;
	free(m->data);
	free(m);
}
