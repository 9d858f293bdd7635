/* A client of the control API's Unix socket for the live tests (docs/api.md):
 * one command, its reply line; checks on a reply that stop the daemon under
 * test and print what came back when they fail; a command with a string
 * argument escaped as JSON. */
#ifndef GF_TEST_APICLIENT_H
#define GF_TEST_APICLIENT_H

#include "daemonutil.h"

struct gf_apiclient {
	struct gf_daemon *dm; /* stopped (gf_daemon_die) when a check fails */
	char path[700];	      /* the control socket */
	char *reply;	      /* the last reply, owned here */
};

/** A client of the socket at @p path, for the daemon @p dm. */
void gf_apic_init(struct gf_apiclient *c, struct gf_daemon *dm, const char *path);
/** Frees the last reply. */
void gf_apic_free(struct gf_apiclient *c);

/** Sends @p cmd (a JSON text) and returns the reply line, valid until the next call; no answer within
 *  20 s fails the test. */
const char *gf_apic_call(struct gf_apiclient *c, const char *cmd);

/** Fails the test unless @p got contains @p want. */
void gf_apic_expect(struct gf_apiclient *c, const char *got, const char *want, const char *what);

/** Fails the test unless |@p got - @p want| <= @p tol (a NAN fails); prints both. */
void gf_apic_expect_near(struct gf_apiclient *c, double got, double want, double tol, const char *what);

/** The number after "KEY": in @p reply (an array's first element), or NAN. */
double gf_apic_num(const char *reply, const char *key);

/** The string after "KEY": in @p reply, unescaped only for \" and \\, in @p out; 0, or -1 if absent. */
int gf_apic_str(const char *reply, const char *key, char *out, size_t size);

/** The owner's PatchConfig moves the WebSocket to @p addr:@p port; once a WebSocket connects there
 *  (10 s at most, else the test fails) it is returned, connected. */
int gf_apic_move_ws(struct gf_apiclient *c, const char *addr, int port);

/** {"CMD": "TEXT"} with TEXT escaped as a JSON string (malloc'ed). */
char *gf_apic_string_cmd(const char *cmd, const char *text);

#endif
