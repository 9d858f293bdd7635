/*
 * The native PipeWire host chosen by the config, without a server: the
 * combinations gf_live_new refuses say why (a sink, output.host_api
 * "PipeWire", with another input host API; a source, input's PipeWire, with
 * another output host API); with no server to reach, the source and the sink
 * alike fail with an error that names PipeWire and the socket's folder. A
 * build without libpipewire refuses either as a configuration error that says
 * so and names the side. Each refusal leaves nothing behind (the sanitizer
 * build checks the frees). The stream itself is tested under a real server:
 * tests/live/test_daemon_pipewire.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live.h"
#include "testutil.h"

static int refuse(const struct gf_live_params *p, const char *want)
{
	struct gf_live *l = NULL;
	struct gf_errbuf eb = {{0}};
	int err = gf_live_new(&l, p, NULL, &eb);
	printf("%s -> %s: %s\n", want, gf_strerror(err), eb.msg);
	CHECK(err != 0 && l == NULL);
	CHECK(strstr(eb.msg, want) != NULL);
	return err;
}

int main(void)
{
	struct gf_live_params p = {.sample_rate = 48000, .block_frames = 256, .latency_slack = 1};
	/* A sink (PipeWire out): its input is gpufir's own node, so no other host API there. */
	p.output.host_api = "PipeWire";
	p.input.host_api = "ALSA";
#ifdef GPUFIR_HAVE_PIPEWIRE
	CHECK(refuse(&p, "output.host_api = \"PipeWire\" takes its input from gpufir's own PipeWire sink: "
			 "input.host_api = \"ALSA\" cannot go with it") == GF_E_CONFIG);
	/* A source (PipeWire in): its output is gpufir's own node. */
	p.input.host_api = "pipewire"; /* any case */
	p.output.host_api = "ALSA";
	CHECK(refuse(&p, "input.host_api = \"PipeWire\" plays to gpufir's own PipeWire source: "
			 "output.host_api = \"ALSA\" cannot go with it") == GF_E_CONFIG);
	/* gpufir's node's name, kept whole or refused. */
	char name[200];
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	p.output.host_api = NULL;
	p.output.device = name;
	CHECK(refuse(&p, "output.device: gpufir's PipeWire node.name is longer than 127 characters") ==
	      GF_E_CONFIG);
	p.output.device = NULL;
	/* No server: an empty runtime folder; the source, then the sink. */
	char *dir = gf_test_tmpdir("live_hostapi");
	setenv("XDG_RUNTIME_DIR", dir, 1);
	setenv("PIPEWIRE_RUNTIME_DIR", dir, 1);
	unsetenv("PIPEWIRE_REMOTE");
	p.output.host_api = NULL;
	CHECK(refuse(&p, "cannot connect to the PipeWire server") == GF_E_AUDIO);
	CHECK(refuse(&p, dir) == GF_E_AUDIO);
	p.input.host_api = NULL;
	p.output.host_api = "PIPEWIRE";
	CHECK(refuse(&p, "cannot connect to the PipeWire server") == GF_E_AUDIO);
	gf_test_rmtree(dir);
	free(dir);
#else
	CHECK(refuse(&p, "output.host_api = \"PipeWire\": gpufir was built without PipeWire") == GF_E_CONFIG);
	p.input.host_api = "pipewire";
	p.output.host_api = NULL;
	CHECK(refuse(&p, "input.host_api = \"PipeWire\": gpufir was built without PipeWire") == GF_E_CONFIG);
#endif
	printf("test_live_hostapi: OK\n");
	return 0;
}
