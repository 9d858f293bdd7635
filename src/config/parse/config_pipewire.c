/* The native PipeWire host's settings as a whole (docs/config.md, "PipeWire"):
 * host_api = "PipeWire" on one side makes the other side gpufir's own node (a
 * source for input's, a sink for output's alone), so a PortAudio host API
 * there, or a PortAudio device index for either node, is refused here, at
 * load, with the file and line, before any audio is opened. */
#include <libconfig.h>
#include <strings.h>

#include "config_parse.h"
#include "config_priv.h"

static int is_pipewire(const char *host_api)
{
	return host_api && strcasecmp(host_api, "PipeWire") == 0;
}

/* @p side's device given as a number: PortAudio's index, which no PipeWire node has. */
static int check_index(const struct gf_cfg_loader *L, const config_setting_t *root, const char *side,
		       const char *what)
{
	const config_setting_t *g = config_setting_get_member(root, side);
	const config_setting_t *dev = g ? config_setting_get_member(g, "device") : NULL;
	if (!dev || config_setting_type(dev) == CONFIG_TYPE_STRING)
		return 0;
	return gf_cfg_fail_key(L, g, side[0] == 'i' ? "input." : "output.", "device",
			       "with PipeWire this is %s, a string (pw-cli ls Node lists them), not a "
			       "PortAudio device index",
			       what);
}

int gf_cfg_check_pipewire(const struct gf_cfg_loader *L, const config_setting_t *root)
{
	const struct gf_config *c = L->c;
	int source = is_pipewire(c->input.host_api);
	if (!source && !is_pipewire(c->output.host_api))
		return 0;
	const char *dev_side = source ? "input" : "output", *own_side = source ? "output" : "input";
	const struct gf_audio_endpoint *own = source ? &c->output : &c->input;
	if (own->host_api && !is_pipewire(own->host_api))
		return gf_cfg_fail_key(L, config_setting_get_member(root, own_side),
				       source ? "output." : "input.", "host_api",
				       "\"%s\" cannot go with %s.host_api = \"PipeWire\": the %s is gpufir's "
				       "own PipeWire %s (leave host_api out)",
				       own->host_api, dev_side, own_side, source ? "source" : "sink");
	int r = check_index(L, root, dev_side,
			    source ? "the node.name of the source to capture"
				   : "the node.name of the sink to play to");
	return r ? r
		 : check_index(L, root, own_side,
			       source ? "gpufir's source's node.name" : "gpufir's sink's node.name");
}
