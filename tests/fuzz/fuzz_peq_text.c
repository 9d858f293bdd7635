/* libFuzzer entry point: the Equalizer APO / AutoEQ / REW parametric EQ text parser. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "peq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gf_peq p = {0};
	struct gf_errbuf eb = {{0}};
	int r = gf_peq_parse_text((const char *)data, size, "fuzz.txt", &p, &eb);
	if (r == 0) { /* what it accepts is a valid set of bands */
		/* the preamps add: their sum is the gain applied, and must be in range too */
		if (p.n > GF_PEQ_MAX_BANDS ||
		    !(p.preamp_db >= GF_PEQ_GAIN_DB_MIN && p.preamp_db <= GF_PEQ_GAIN_DB_MAX))
			abort();
		for (uint32_t i = 0; i < p.n; i++)
			if (!(p.bands[i].freq_hz > 0.0) || !isfinite(p.bands[i].gain_db))
				abort();
	} else if (!eb.msg[0]) {
		abort(); /* every error says why */
	}
	gf_peq_free(&p);
	return 0;
}
