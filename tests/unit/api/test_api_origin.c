/*
 * Who may use the WebSocket's port from a browser (api_origin.c), table-driven: the Host and Origin
 * headers the daemon's own page and its allowed origins send are accepted, with a loopback or an
 * IPv6 control_address; another site, port, scheme, a look-alike name, "null" and a missing Host are
 * not; a missing Origin (not a browser) is.
 */
#include <stdio.h>
#include <string.h>

#include "api_transport.h"
#include "testutil.h"

struct hdr_case {
	const char *value; /* NULL: the header is absent */
	int ok;
};

static void check(const struct gf_api_web_rules *r, int host, const struct hdr_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int got = host ? gf_api_host_ok(r, cases[i].value) : gf_api_origin_ok(r, cases[i].value);
		printf("  %s %-40s %s\n",
		       host ? "Host:  " : "Origin:", cases[i].value ? cases[i].value : "(none)",
		       got ? "accepted" : "refused");
		CHECK(got == cases[i].ok);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	static const char *const allowed[] = {"http://ui.example:8080", "https://dsp.example.org"};
	struct gf_api_server_params p = {.port = 1234, .allowed_origins = allowed, .n_allowed_origins = 2};
	struct gf_api_web_rules r;
	CHECK_OK(gf_api_web_rules_init(&r, &p));
	static const struct hdr_case hosts[] = {
		{"127.0.0.1:1234", 1},
		{"localhost:1234", 1},
		{"LOCALHOST:1234", 1},
		{"[::1]:1234", 1},
		{"127.0.0.1", 1},
		{"ui.example:8080", 1},
		{"dsp.example.org", 1},
		{"evil.example:1234", 0},
		{"127.0.0.1:1235", 0},
		{"127.0.0.1:", 0},
		{"127.0.0.1:1234x", 0},
		{"localhost.evil.example:1234", 0},
		{"::1:1234", 0},
		{"[::1", 0},
		{"ui.example:8081", 0},
		{"", 0},
		{NULL, 0},
	};
	static const struct hdr_case origins[] = {
		{NULL, 1},
		{"http://127.0.0.1:1234", 1},
		{"http://localhost:1234", 1},
		{"http://[::1]:1234", 1},
		{"http://ui.example:8080", 1},
		{"https://dsp.example.org", 1},
		{"HTTPS://DSP.EXAMPLE.ORG", 1},
		{"https://127.0.0.1:1234", 0}, /* the page is served over http only */
		{"http://127.0.0.1:1235", 0},
		{"http://127.0.0.1", 0}, /* port 80: not ours */
		{"http://evil.example:1234", 0},
		{"http://ui.example:8080.evil.example", 0},
		{"https://dsp.example.org.evil.example", 0},
		{"null", 0},
		{"file://", 0},
		{"", 0},
	};
	check(&r, 1, hosts, sizeof(hosts) / sizeof(hosts[0]));
	check(&r, 0, origins, sizeof(origins) / sizeof(origins[0]));
	gf_api_web_rules_clear(&r);

	/* An IPv6 control_address on port 80: the page's origin leaves the port out. */
	struct gf_api_server_params p6 = {.address = "fd00::5", .port = 80};
	CHECK_OK(gf_api_web_rules_init(&r, &p6));
	static const struct hdr_case hosts6[] = {{"[fd00::5]", 1}, {"[FD00::5]:80", 1}, {"[fd00::6]", 0}};
	static const struct hdr_case origins6[] = {{"http://[fd00::5]", 1},
						   {"http://[fd00::5]:80", 1},
						   {"http://[fd00::5]:8080", 0},
						   {"http://fd00::5", 0}};
	check(&r, 1, hosts6, sizeof(hosts6) / sizeof(hosts6[0]));
	check(&r, 0, origins6, sizeof(origins6) / sizeof(origins6[0]));
	gf_api_web_rules_clear(&r);
	puts("test_api_origin: OK");
	return 0;
}
