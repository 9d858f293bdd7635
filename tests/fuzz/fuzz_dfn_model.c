/*
 * libFuzzer entry point: the DeepFilterNet3 model file's loader (src/dfn/dfn_model.c).
 * The input is taken as the file's body and its CRC-32 appended, so that the
 * fuzzer gets past the checksum to the header and the tensors.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dfn_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size + 4);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	uint32_t crc = dfn_model_crc32(data, size);
	for (int i = 0; i < 4; i++)
		buf[size + i] = (uint8_t)(crc >> (8 * i));
	struct dfn_model *m = NULL;
	struct gf_errbuf eb = {{0}};
	int r = dfn_model_parse(buf, size + 4, "fuzz.dfn", &m, &eb);
	if (r == 0) { /* what it accepts has every tensor, every weight finite */
		for (int t = 0; t < DFN_T_COUNT; t++)
			for (size_t i = 0; i < m->n[t]; i++)
				if (!isfinite(m->t[t][i]))
					abort();
	} else if (r != GF_E_FORMAT && r != GF_E_NOMEM) {
		abort();
	} else if (!eb.msg[0] || m) {
		abort(); /* every error says why and leaves nothing */
	}
	dfn_model_free(m);
	free(buf);
	return 0;
}
