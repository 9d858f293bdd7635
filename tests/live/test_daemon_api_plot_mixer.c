/*
 * The control page's response plot of a large mixer (docs/api.md, "The control
 * page"), against the real `gpufir --live` under JACK's dummy driver with 64
 * capture and playback ports: a 64 x 64 mixer (4096 routing paths, gains
 * spread so that the outputs differ) is drawn per output, at most 16 curves,
 * so GET /response.svg serves well under 1 MB (drawn per path it was 116 MB,
 * built in memory at every reload).
 */
#define _GNU_SOURCE /* strcasestr */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemonutil.h"
#include "jackplay.h"
#include "testutil.h"

#define RATE 48000
#define PERIOD 256
#define CH 64
#define BODY_MAX (1 << 20)

static struct gf_daemon dm;
static int port;

static void write_conf(void)
{
	FILE *f = gf_daemon_conf_begin(&dm, RATE, PERIOD, "cpu", CH, "system");
	fprintf(f, "control_port = %d;\nmixer = { inputs = %d; outputs = %d; paths = (\n", port, CH, CH);
	for (int i = 0; i < CH; i++)
		for (int o = 0; o < CH; o++)
			fprintf(f, "%s{ in = %d; out = %d; gain_db = %.1f; }", i || o ? ",\n" : "", i, o,
				-40.0 - 0.1 * ((i * 7 + o * 13) % 97));
	fprintf(f, " ); };\n");
	CHECK(fclose(f) == 0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *bin = gf_daemon_test_bin(0);
	gf_daemon_init(&dm, "daemon-plot-mixer");
	port = gf_daemon_free_tcp_port();
	write_conf();
	if (gf_jack_server_start_ports(&dm.jack, "gpufir-plotmix", RATE, PERIOD, CH) != 0)
		gf_test_skip("no private JACK server (jackd missing or did not start)");
	gf_daemon_spawn(&dm, bin, 0);
	gf_daemon_wait_ready(&dm, 1, 60.0, "start-up");
	static char r[BODY_MAX + 1];
	if (gf_daemon_http(port, "GET /response.svg HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
			   r, sizeof(r)) != 0)
		gf_daemon_die(&dm, "no TCP listener on the control port");
	const char *body = strstr(r, "\r\n\r\n"), *cl = strcasestr(r, "\r\ncontent-length:");
	long len = cl ? strtol(cl + 17, NULL, 10) : -1;
	printf("GET /response.svg of a 64 x 64 mixer: Content-Length %ld\n", len);
	if (!strstr(r, "HTTP/1.1 200") || !body || len <= 0 || len >= BODY_MAX)
		gf_daemon_die(&dm, "the plot is missing or over 1 MB");
	CHECK(len == (long)strlen(body + 4));
	if (!strstr(body, "mixer of 4096 paths") || !strstr(body, "the first 16 drawn") ||
	    !strstr(body, "</svg>\n"))
		gf_daemon_die(&dm, "the plot is not the mixer's per output");
	gf_daemon_terminate(&dm, 10.0, "stop");
	gf_daemon_finish(&dm);
	printf("test_daemon_api_plot_mixer: ok\n");
	return 0;
}
