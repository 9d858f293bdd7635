/*
 * The daemon's volume, mute and state file (daemon_control.h), on the
 * control thread's side, without a stream:
 * - the limit: a request above volume_limit_db is clamped and the result says
 *   so; below the floor likewise; a non-finite one is an error and changes
 *   nothing; adjust and toggle; the configuration's volume_db above its limit
 *   is a config error;
 * - the gain stage made for a stream starts at the volume in force, and a
 *   change reaches it (its output follows, ramped);
 * - the state file: not written before the debounce, then written whole
 *   (no temporary left beside it), read back by the next daemon (it wins over
 *   volume_db); a corrupt, a truncated and an out-of-range file are ignored
 *   (the config's volume); a missing one too, and a folder in its place (never
 *   replaced); an unwritable folder is no error;
 * - a reload's volume_db is a request, a lower limit clamps the volume.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "daemon_control.h"
#include "daemon_internal.h"
#include "testutil.h"

static char *dir, *state;

static struct gf_config *conf(const char *extra)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "filters = ( { name = \"g\"; design = \"identity\"; } );\nchain = [\"g\"];\n%s\n", extra);
	struct gf_config *c;
	struct gf_errbuf eb = {{0}};
	CHECK_OK_EB(gf_config_load_string(text, dir, &c, &eb), &eb);
	return c;
}

/* A daemon with @p c as its running configuration, nothing else. */
static void daemon_with(struct daemon *d, struct gf_config *c)
{
	memset(d, 0, sizeof(*d));
	d->cfg = c;
}

static void done(struct daemon *d)
{
	gf_dm_volume_free(d, 1);
	gf_config_free(d->cfg);
}

static struct gf_config *conf_state(double db, double limit)
{
	char extra[700];
	snprintf(extra, sizeof(extra), "volume_db = %.1f;\nvolume_limit_db = %.1f;\nstate_file = \"%s\";", db,
		 limit, state);
	return conf(extra);
}

static void test_limits(void)
{
	struct daemon d;
	struct gf_dm_volume_result r;
	struct gf_errbuf eb = {{0}};
	daemon_with(&d, conf("volume_db = -10.0;\nvolume_limit_db = -3.0;"));
	CHECK_OK(gf_daemon_volume_get(&d, &r, &eb));
	CHECK(r.volume_db == -10.0 && r.limit_db == -3.0 && !r.mute && !r.clamped);
	CHECK_OK(gf_daemon_volume_set(&d, 6.0, &r, &eb));
	printf("set +6 dB under a -3 dB limit: %s\n", r.msg);
	CHECK(r.volume_db == -3.0 && r.clamped && strstr(r.msg, "clamped to volume_limit_db"));
	CHECK_OK(gf_daemon_volume_adjust(&d, -4.5, &r, &eb));
	CHECK(r.volume_db == -7.5 && !r.clamped);
	CHECK_OK(gf_daemon_volume_set(&d, -500.0, &r, &eb));
	CHECK(r.volume_db == GF_VOLUME_MIN_DB && r.clamped && strstr(r.msg, "floor"));
	CHECK_OK(gf_daemon_volume_set(&d, -20.0, &r, &eb));
	CHECK(gf_daemon_volume_set(&d, NAN, &r, &eb) == GF_E_INVAL && strstr(eb.msg, "not a number"));
	CHECK(gf_daemon_volume_adjust(&d, INFINITY, &r, &eb) == GF_E_INVAL);
	CHECK_OK(gf_daemon_volume_get(&d, &r, &eb));
	CHECK(r.volume_db == -20.0); /* the bad requests changed nothing */
	CHECK_OK(gf_daemon_mute_toggle(&d, &r, &eb));
	CHECK(r.mute && r.volume_db == -20.0 && strstr(r.msg, "muted"));
	CHECK_OK(gf_daemon_mute_toggle(&d, &r, &eb));
	CHECK(!r.mute);
	CHECK_OK(gf_daemon_mute_set(&d, 1, &r, &eb));
	CHECK(r.mute);
	/* Without a stream there is nothing to meter. */
	struct gf_dm_levels *lv = malloc(sizeof(*lv));
	CHECK(lv);
	CHECK(gf_daemon_levels(&d, GF_GAIN_READER_API, lv, &eb) == GF_E_BUSY && strstr(eb.msg, "no audio"));
	CHECK(gf_daemon_clipped_get(&d) == 0);
	free(lv);
	done(&d);
	/* Before the configuration is loaded: an error, not a crash. */
	daemon_with(&d, NULL);
	CHECK(gf_daemon_volume_get(&d, &r, &eb) == GF_E_BUSY && strstr(eb.msg, "not loaded"));
	/* The config's start-up volume above its own limit is refused. */
	struct gf_config *c;
	CHECK(gf_config_load_string("filters = ( { name = \"g\"; design = \"identity\"; } );\n"
				    "chain = [\"g\"];\nvolume_db = 3.0;\n",
				    dir, &c, &eb) == GF_E_CONFIG &&
	      strstr(eb.msg, "volume_limit_db"));
	printf("volume_db above the limit: %s\n", eb.msg);
}

/* The stream's gain stage starts at the volume, and follows a change (ramped). */
static void test_stage(void)
{
	struct daemon d;
	struct gf_dm_volume_result r;
	struct gf_errbuf eb = {{0}};
	daemon_with(&d, conf("volume_db = -6.0;\nsample_rate = 48000;"));
	struct gf_gain_stage *g;
	CHECK_OK_EB(gf_dm_gain_new(&d, &g, &eb), &eb);
	float x[2 * 64];
	for (int i = 0; i < 128; i++)
		x[i] = 1.0f;
	gf_gain_stage_process(g, NULL, x, 64, 2);
	CHECK(fabsf(x[0] - powf(10.0f, -6.0f / 20.0f)) < 1e-6f);
	CHECK_OK(gf_daemon_volume_set(&d, -20.0, &r, &eb));
	float last = x[127];
	for (int b = 0; b < 40; b++) { /* 2560 frames: past the ramp */
		for (int i = 0; i < 128; i++)
			x[i] = 1.0f;
		gf_gain_stage_process(g, NULL, x, 64, 2);
		CHECK(fabsf(x[0] - last) <= 0.5f / gf_gain_stage_ramp_frames(g) + 1e-6f);
		last = x[127];
	}
	CHECK(fabsf(x[127] - 0.1f) < 1e-6f);
	struct gf_dm_levels *lv = malloc(sizeof(*lv));
	CHECK(lv);
	CHECK_OK(gf_daemon_levels(&d, GF_GAIN_READER_API, lv, &eb));
	CHECK(lv->channels == 2 && fabs(lv->playback_peak[0] - 20.0 * log10(0.501187)) < 0.01);
	CHECK(lv->interval_s > 0.05 && isinf(lv->capture_peak[0])); /* no input metered */
	free(lv);
	gf_dm_gain_release(&d, 1);
	done(&d);
}

static void read_state(char *buf, size_t len)
{
	CHECK(gf_test_read_file(state, buf, len) > 0);
}

/* Only the state file in the folder: no temporary left beside it. */
static void only_state_file(void)
{
	DIR *dh = opendir(dir);
	CHECK(dh);
	for (struct dirent *e; (e = readdir(dh));)
		CHECK(e->d_name[0] == '.' ? !strchr(e->d_name, '-') || !strcmp(e->d_name, "..")
					  : !strcmp(e->d_name, "state"));
	closedir(dh);
}

/* A fresh daemon on a config of volume_db -6: the volume it starts at. */
static double start_volume(int *mute)
{
	struct daemon d;
	struct gf_dm_volume_result r;
	struct gf_errbuf eb = {{0}};
	daemon_with(&d, conf_state(-6.0, 0.0));
	CHECK_OK(gf_daemon_volume_get(&d, &r, &eb));
	*mute = r.mute;
	done(&d);
	return r.volume_db;
}

static void test_state_file(void)
{
	struct daemon d;
	struct gf_dm_volume_result r;
	struct gf_errbuf eb = {{0}};
	char buf[512];
	int mute;
	CHECK(start_volume(&mute) == -6.0 && !mute); /* no file yet: the config's */
	CHECK(!gf_test_exists(state));
	daemon_with(&d, conf_state(-6.0, 0.0));
	CHECK_OK(gf_daemon_volume_set(&d, -17.5, &r, &eb));
	CHECK_OK(gf_daemon_mute_set(&d, 1, &r, &eb));
	gf_dm_volume_tick(&d);
	CHECK(!gf_test_exists(state)); /* debounced */
	usleep((GF_DM_STATE_DEBOUNCE_MS + 50) * 1000);
	gf_dm_volume_tick(&d);
	read_state(buf, sizeof(buf));
	printf("state file:\n%s", buf);
	CHECK(strstr(buf, "volume_db = -17.50\n") && strstr(buf, "mute = 1\n"));
	only_state_file();
	/* A change written at exit, without waiting for the debounce. */
	CHECK_OK(gf_daemon_mute_set(&d, 0, &r, &eb));
	done(&d);
	read_state(buf, sizeof(buf));
	CHECK(strstr(buf, "mute = 0\n"));
	/* A restart restores it: the state file wins over volume_db. */
	CHECK(start_volume(&mute) == -17.5 && !mute);

	/* Corrupt files are ignored: the config's volume. */
	const char *bad[] = {"garbage\n",
			     "volume_db = -3.0\n",
			     "volume_db = nan\nmute = 0\n",
			     "volume_db = -3.0\nmute = 7\n",
			     "volume_db = 1e9\nmute = 0\n",
			     "volume_db = -3.0 dB\nmute = 0\n",
			     ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		gf_test_write_text(state, bad[i]);
		CHECK(start_volume(&mute) == -6.0 && !mute);
	}
	gf_test_write_file(state, "volume_db = -3.0\0\nmute = 0\n", 27); /* a NUL byte */
	CHECK(start_volume(&mute) == -6.0);
	/* A state above the limit of this config: clamped to it. */
	gf_test_write_text(state, "# comment\nvolume_db = 12.0\nmute = 1\n");
	CHECK(start_volume(&mute) == 0.0 && mute);
	CHECK(unlink(state) == 0);
	/* Not a regular file (a folder): ignored at start, and never replaced by a write. */
	CHECK(mkdir(state, 0700) == 0);
	CHECK(start_volume(&mute) == -6.0);
	daemon_with(&d, conf_state(-6.0, 0.0));
	CHECK_OK(gf_daemon_volume_set(&d, -2.0, &r, &eb));
	done(&d);
	struct stat sb;
	CHECK(stat(state, &sb) == 0 && S_ISDIR(sb.st_mode));
	CHECK(rmdir(state) == 0);

	/* A folder that cannot be written: a warning, the volume still works. */
	char extra[700];
	snprintf(extra, sizeof(extra), "state_file = \"%s/no/such/dir/state\";", dir);
	daemon_with(&d, conf(extra));
	CHECK_OK(gf_daemon_volume_set(&d, -1.0, &r, &eb));
	done(&d);
	CHECK(r.volume_db == -1.0);
}

/* A reload: a changed volume_db is a request; a lower limit clamps; unchanged ones leave it. */
static void test_reload(void)
{
	struct daemon d;
	struct gf_dm_volume_result r;
	struct gf_errbuf eb = {{0}};
	daemon_with(&d, conf("volume_db = -6.0;"));
	CHECK_OK(gf_daemon_volume_set(&d, -30.0, &r, &eb));
	gf_config_free(d.cfg);
	d.cfg = conf("volume_db = -6.0;"); /* the same settings: the volume stays */
	gf_dm_volume_tick(&d);
	CHECK_OK(gf_daemon_volume_get(&d, &r, &eb));
	CHECK(r.volume_db == -30.0);
	gf_config_free(d.cfg);
	d.cfg = conf("volume_db = -12.0;");
	gf_dm_volume_tick(&d);
	CHECK_OK(gf_daemon_volume_get(&d, &r, &eb));
	CHECK(r.volume_db == -12.0);
	gf_config_free(d.cfg);
	d.cfg = conf("volume_db = -12.0;\nvolume_limit_db = -10.0;"); /* a limit above the volume */
	gf_dm_volume_tick(&d);
	CHECK_OK(gf_daemon_volume_set(&d, -5.0, &r, &eb));
	CHECK(r.volume_db == -10.0 && r.clamped);
	gf_config_free(d.cfg);
	d.cfg = conf("volume_db = -12.0;\nvolume_limit_db = -11.0;"); /* a limit below the volume */
	gf_dm_volume_tick(&d);
	CHECK_OK(gf_daemon_volume_get(&d, &r, &eb));
	CHECK(r.volume_db == -11.0 && r.limit_db == -11.0);
	done(&d);
}

int main(void)
{
	dir = gf_test_tmpdir("volume");
	state = gf_test_path(dir, "state");
	test_limits();
	test_stage();
	test_state_file();
	test_reload();
	gf_test_rmtree(dir);
	return 0;
}
