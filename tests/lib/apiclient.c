/* The live tests' client of the control API's Unix socket (apiclient.h). */
#include "apiclient.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "testutil.h"
#include "wsclient.h"

void gf_apic_init(struct gf_apiclient *c, struct gf_daemon *dm, const char *path)
{
	c->dm = dm;
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->reply = NULL;
}

int gf_apic_move_ws(struct gf_apiclient *c, const char *addr, int port)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "{\"PatchConfig\": {\"control_address\": \"%s\", \"control_port\": %d}}",
		 addr, port);
	gf_apic_expect(c, gf_apic_call(c, cmd), "{\"PatchConfig\":{\"result\":\"Ok\"}}",
		       "the owner's PatchConfig moving the WebSocket");
	int ws = -1;
	for (int i = 0; i < 100 && ws < 0; i++, gf_daemon_idle_ms(c->dm, 50))
		ws = gf_ws_connect(addr, port, 5000);
	if (ws < 0)
		gf_daemon_die(c->dm, "no WebSocket where the PatchConfig moved it");
	return ws;
}

void gf_apic_free(struct gf_apiclient *c)
{
	free(c->reply);
	c->reply = NULL;
}

const char *gf_apic_call(struct gf_apiclient *c, const char *cmd)
{
	struct gf_errbuf eb = {{0}};
	gf_apic_free(c);
	if (gf_api_call(c->path, cmd, &c->reply, 20000, &eb) != 0) {
		printf("control socket, %.80s: %s\n", cmd, eb.msg);
		gf_daemon_die(c->dm, "no answer on the control socket");
	}
	return c->reply;
}

void gf_apic_expect(struct gf_apiclient *c, const char *got, const char *want, const char *what)
{
	if (!strstr(got, want)) {
		printf("%s: got %.600s\nwanted: %s\n", what, got, want);
		gf_daemon_die(c->dm, what);
	}
}

void gf_apic_expect_near(struct gf_apiclient *c, double got, double want, double tol, const char *what)
{
	printf("%s: %.3f (want %.3f +- %.2f)\n", what, got, want, tol);
	if (!(fabs(got - want) <= tol))
		gf_daemon_die(c->dm, what);
}

double gf_apic_num(const char *reply, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), "\"%s\":", key);
	const char *p = strstr(reply, k);
	if (!p)
		return NAN;
	p += strlen(k);
	while (*p == '[' || *p == ' ')
		p++;
	char *end;
	double v = strtod(p, &end);
	return end == p ? NAN : v;
}

int gf_apic_str(const char *reply, const char *key, char *out, size_t size)
{
	char k[64];
	snprintf(k, sizeof(k), "\"%s\":\"", key);
	const char *p = strstr(reply, k);
	if (!p || size == 0)
		return -1;
	size_t n = 0;
	for (p += strlen(k); *p && *p != '"' && n + 1 < size; p++) {
		if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
			p++;
		out[n++] = *p;
	}
	out[n] = '\0';
	return *p == '"' ? 0 : -1;
}

char *gf_apic_string_cmd(const char *cmd, const char *text)
{
	char *m = malloc(strlen(cmd) + 2 * strlen(text) + 16), *p = m;
	CHECK(m);
	p += sprintf(p, "{\"%s\": \"", cmd);
	for (const char *s = text; *s; s++) {
		if (*s == '\n') {
			*p++ = '\\';
			*p++ = 'n';
			continue;
		}
		if (*s == '"' || *s == '\\')
			*p++ = '\\';
		*p++ = *s;
	}
	strcpy(p, "\"}");
	return m;
}
