/*
 * libFuzzer entry point: the libconfig parser and gpufir's validation.
 * Every input must either load or fail with a message; inputs that load and
 * name no files are also built (at 8 kHz, with max_taps bounding the work).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	gf_log_set_level(GF_LOG_ERR); /* unknown-key warnings would flood the output */
	struct gf_config *c = NULL;
	struct gf_errbuf eb = {{0}};
	int r = gf_config_load_string(text, "/nonexistent", &c, &eb);
	if (r == 0) {
		/* file loading has its own targets; here it would read whatever the input names */
		if (c->n_files == 0) {
			struct gf_filter_set *fs = NULL;
			if (!c->max_taps || c->max_taps > 4096)
				c->max_taps = 4096;
			if (gf_config_build(c, 8000, 2, &fs, &eb) == 0 && gf_filter_set_check_finite(fs))
				abort(); /* build promises finite taps */
			gf_filter_set_free(fs);
		}
		gf_config_free(c);
	} else if (c != NULL || eb.msg[0] == '\0') {
		abort(); /* a failure leaves no object and says why */
	}
	free(text);
	return 0;
}
