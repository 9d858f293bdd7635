/* A build without libpipewire-0.3: the native PipeWire host is compiled out,
 * and a config that asks for it gets a clear error (exit status 6, bad
 * configuration), never a silent fall-back to another host API. */
#include "live_internal.h"

int gf_live_pw_open(struct gf_live *l, const struct gf_live_params *p, struct gf_errbuf *eb)
{
	(void)l;
	gf_errbuf_set(eb,
		      "%s.host_api = \"PipeWire\": gpufir was built without PipeWire (install "
		      "libpipewire-0.3-dev and rebuild), or use host_api = \"JACK\" through pipewire-jack",
		      gf_live_pw_wanted(&p->input) ? "input" : "output");
	return GF_E_CONFIG;
}

int gf_live_pw_start(struct gf_live *l, struct gf_errbuf *eb)
{
	(void)l;
	(void)eb;
	return GF_E_CONFIG;
}

void gf_live_pw_stop(struct gf_live *l)
{
	(void)l;
}

void gf_live_pw_close(struct gf_live *l)
{
	(void)l;
}

void gf_live_pw_latency(struct gf_live *l, uint32_t frames)
{
	(void)l;
	(void)frames;
}

const char *gf_live_pw_lost(struct gf_live *l, char *buf, size_t len)
{
	(void)l;
	(void)buf;
	(void)len;
	return NULL;
}

int gf_live_pw_idle(const struct gf_live *l)
{
	(void)l;
	return 0;
}
