/* Whether a configuration's filters depend on the file they filter (config.h). */
#include "config.h"
#include "config_priv.h"

int gf_config_reads_input(const struct gf_config *c)
{
	for (uint32_t i = 0; i < c->n_filters; i++) {
		const struct gf_config_filter *f = &c->filters[i];
		if (f->kind == FK_DESIGN &&
		    ((f->design.type == GF_DESIGN_DENOISE && f->design.use_input) || f->design.freq_auto))
			return 1;
	}
	return 0;
}
