/* The built-in default configuration: the denoise chain gpufir runs with no -c.
 * config/gpufir.conf is this same chain written out (a test checks they match). */
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"
#include "log.h"

static const char default_text[] =
	"filters = (\n"
	"  { name = \"hum\"; design = \"notch\"; freq_hz = \"auto\"; harmonics = 4;\n"
	"    bandwidth_hz = 15.0; attenuation_db = 40.0; },\n"
	"  { name = \"hiss\"; design = \"lowpass\"; cutoff_hz = 14000.0; transition_hz = 2000.0;\n"
	"    attenuation_db = 60.0; },\n"
	"  { name = \"nr\"; design = \"suppress\"; reduction_db = 15.0; highpass_hz = 25.0; }\n"
	");\n"
	"chain = [\"hum\", \"hiss\", \"nr\"];\n"
	"phase = \"auto\";\n";

int gf_config_default(struct gf_config **out)
{
	struct gf_errbuf eb;
	int r = gf_config_load_string(default_text, NULL, out, &eb);
	if (r) {
		gf_err("built-in default config: %s", eb.msg);
		return r;
	}
	free((*out)->priv->src);
	(*out)->priv->builtin = 1;
	if (!((*out)->priv->src = strdup("<built-in default>")))
		r = GF_E_NOMEM;
	if (r) {
		gf_config_free(*out);
		*out = NULL;
	}
	return r;
}
