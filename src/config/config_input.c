/* Whether a configuration's filters depend on the input they filter: the file (offline), or,
 * live, the hum in the running input (config.h). */
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

int gf_config_hum_auto(const struct gf_config *c, uint32_t *max_harmonic)
{
	int any = 0;
	*max_harmonic = 0;
	for (uint32_t i = 0; i < c->n_filters; i++) {
		const struct gf_config_filter *f = &c->filters[i];
		if (f->kind == FK_DESIGN && f->design.type == GF_DESIGN_NOTCH && f->design.freq_auto) {
			any = 1;
			if (f->design.harmonics > *max_harmonic)
				*max_harmonic = f->design.harmonics;
		}
	}
	return any;
}
