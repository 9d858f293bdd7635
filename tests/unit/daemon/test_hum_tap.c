/*
 * The live hum detector's input tap (daemon_hum.c) against work left behind:
 * - a new stream on an unchanged daemon gets the same tap (drained), so no
 *   tap is made per stream start;
 * - after a stuck worker was abandoned, the next stream gets a new tap, and
 *   the old one stays usable: that worker may still push into it;
 * - at exit (gf_dm_hum_free) with a PortAudio call left behind (d->audio_stuck:
 *   a late open may still start a stream whose worker pushes into the tap),
 *   and with a worker abandoned, the tap stays usable: pushed frames read back.
 *   A tap freed there is a use after free (ASan), or garbage read back.
 */
#include <string.h>

#include "config.h"
#include "daemon_internal.h"
#include "input_tap.h"
#include "testutil.h"

#define BLOCK 64

static char *dir;

/* A daemon whose running config has a notch with freq_hz = "auto", nothing else. */
static void daemon_hum(struct daemon *d)
{
	memset(d, 0, sizeof(*d));
	struct gf_errbuf eb = {{0}};
	const char *text = "sample_rate = 48000;\nblock_frames = 64;\n"
			   "filters = ( { name = \"hum\"; design = \"notch\"; freq_hz = \"auto\";\n"
			   "  bandwidth_hz = 5.0; } );\nchain = [\"hum\"];\n";
	CHECK_OK_EB(gf_config_load_string(text, dir, &d->cfg, &eb), &eb);
}

/* A block pushed into @p t as a worker would, then read back whole. */
static void check_usable(struct gf_input_tap *t, float v, int line)
{
	float x[BLOCK * 2], y[BLOCK];
	for (int i = 0; i < BLOCK * 2; i++)
		x[i] = v;
	gf_input_tap_push(t, x, BLOCK, 2);
	uint32_t n = gf_input_tap_read(t, y, BLOCK);
	if (n != BLOCK || y[0] != v || y[BLOCK - 1] != v) {
		fprintf(stderr, "line %d: the tap read back %u frames (%g ...) for %d of %g\n", line, n,
			n ? y[0] : 0.0, BLOCK, v);
		CHECK(0);
	}
}

static void case_restart_and_abandon(void)
{
	struct daemon d;
	daemon_hum(&d);
	struct gf_input_tap *t1 = gf_dm_hum_tap(&d);
	CHECK(t1 != NULL);
	check_usable(t1, 0.25f, __LINE__);
	CHECK(gf_dm_hum_tap(&d) == t1); /* a stream restarted: the same tap */
	d.engines_abandoned = 1;	/* that stream's worker got stuck and was abandoned */
	struct gf_input_tap *t2 = gf_dm_hum_tap(&d);
	CHECK(t2 != NULL && t2 != t1);
	check_usable(t1, 0.5f, __LINE__); /* the stuck worker's is kept */
	check_usable(t2, 0.75f, __LINE__);
	gf_dm_hum_free(&d);
	gf_config_free(d.cfg);
	printf("a restarted stream keeps the tap; an abandoned worker's is kept, the next stream's is new\n");
}

/* Exit with work left behind: @p stuck_call, an audio call; else a worker abandoned after the tap. */
static void case_exit_left_behind(int stuck_call)
{
	struct daemon d;
	daemon_hum(&d);
	struct gf_input_tap *t = gf_dm_hum_tap(&d);
	CHECK(t != NULL);
	if (stuck_call)
		d.audio_stuck = 1; /* the open that got @p t was left behind */
	else
		d.engines_abandoned++;
	gf_dm_hum_free(&d);
	CHECK(d.hum == NULL);
	check_usable(t, 0.125f, __LINE__); /* what the left-behind stream would do */
	gf_config_free(d.cfg);
	printf("exit with %s: the tap stays usable\n",
	       stuck_call ? "an audio call left behind" : "a worker abandoned");
}

int main(void)
{
	dir = gf_test_tmpdir("hum-tap");
	case_restart_and_abandon();
	case_exit_left_behind(0);
	case_exit_left_behind(1);
	puts("test_hum_tap: ok");
	return 0;
}
