/* A stage's live controls under the real daemon (stagetest.h). */
#include "stagetest.h"

#include <stdio.h>
#include <stdlib.h>

#include "status.h"
#include "testutil.h"

void gf_stagetest_open(struct gf_stagetest *t, const char *tag, size_t frames, int ch)
{
	gf_daemon_init(&t->dm, tag);
	snprintf(t->ctl_path, sizeof(t->ctl_path), "%s/control", t->dm.dir);
	gf_apic_init(&t->api, &t->dm, t->ctl_path);
	t->x = malloc(sizeof(float) * frames * (size_t)ch);
	t->rec = calloc(frames * (size_t)ch, sizeof(float));
	CHECK(t->x && t->rec);
	gf_daemon_tap_init(&t->tap, t->x, t->rec, frames, ch, 0);
	t->jc = NULL;
}

void gf_stagetest_start(struct gf_stagetest *t, const char *bin, const char *jack_prefix, uint32_t rate,
			uint32_t block, double ready_s, int settle_ms)
{
	t->jc = gf_daemon_jack_client(&t->dm, jack_prefix, rate, block, &t->tap);
	gf_daemon_spawn(&t->dm, bin, 0);
	gf_daemon_wait_ready(&t->dm, 1, ready_s, "start-up");
	gf_daemon_connect_ports(&t->dm, t->jc, &t->tap);
	gf_daemon_idle_ms(&t->dm, settle_ms);
	char st[GF_STATUS_MAX];
	gf_daemon_query_status(&t->dm, st, sizeof(st));
	t->blocks = gf_daemon_status_num(st, "blocks");
	t->xruns = gf_daemon_status_xruns(st);
	t->ready = t->dm.nl.ready;
}

void gf_stagetest_status(struct gf_stagetest *t, const char *stage, const char *db_key, const char *db,
			 const char *bypass, const char *what, char *st, size_t len)
{
	char key[128];
	gf_daemon_ran_on(&t->dm, &t->blocks, t->xruns, what, st, len);
	snprintf(key, sizeof(key), "%s_%s", stage, db_key);
	gf_daemon_expect_line(&t->dm, st, key, db);
	snprintf(key, sizeof(key), "%s_bypass", stage);
	gf_daemon_expect_line(&t->dm, st, key, bypass);
}

const char *gf_stagetest_call(struct gf_stagetest *t, const char *cmd, const char *db_key, int bypass,
			      double db)
{
	char what[300];
	const char *r = gf_apic_call(&t->api, cmd);
	snprintf(what, sizeof(what), "%s: bypass", cmd);
	gf_apic_expect(&t->api, r, bypass ? "\"bypass\":true" : "\"bypass\":false", what);
	snprintf(what, sizeof(what), "%s: %s", cmd, db_key);
	gf_apic_expect_near(&t->api, gf_apic_num(r, db_key), db, 1e-9, what);
	return r;
}

void gf_stagetest_reloaded(struct gf_stagetest *t, const char *what, const char *why)
{
	gf_daemon_reload_live(&t->dm, &t->ready, what, why);
}

void gf_stagetest_no_restart(struct gf_stagetest *t)
{
	if (t->dm.nl.ready != t->ready)
		gf_daemon_die(&t->dm, "the stream restarted (READY=1 beyond the reloads')");
}

void gf_stagetest_close(struct gf_stagetest *t)
{
	gf_daemon_terminate(&t->dm, 20.0, "");
	if (t->jc) {
		jack_deactivate(t->jc);
		jack_client_close(t->jc);
	}
	gf_daemon_finish(&t->dm);
	gf_apic_free(&t->api);
	free(t->x);
	free(t->rec);
}
