/* A stage's live controls under the real `gpufir --live` (the noise suppressor's, the neural
 * stage's): the daemon against a private JACK server (dummy driver) with a control socket, a test
 * client that feeds a signal and records what comes back, the stream's progress since the checks
 * began, and the reloads that must be applied without a restart. The test writes the config
 * (control_socket = t->ctl_path) and judges the recording. */
#ifndef GF_TEST_STAGETEST_H
#define GF_TEST_STAGETEST_H

#include <jack/jack.h>

#include "apiclient.h"
#include "daemonutil.h"

struct gf_stagetest {
	struct gf_daemon dm;
	struct gf_apiclient api; /* on ctl_path */
	char ctl_path[700];	 /* the config's control_socket */
	struct gf_daemon_tap tap;
	float *x, *rec; /* frames x ch each: the test fills x before gf_stagetest_start */
	jack_client_t *jc;
	long blocks, xruns; /* the stream's at the checks' start, blocks updated by each check */
	int ready;	    /* READY=1 messages so far: a reload's are counted, a restart's are not */
};

/** The scratch directory, the control socket's path and client, and @p frames x @p ch of input and
 *  recording (zeroed) for the daemon @p tag. */
void gf_stagetest_open(struct gf_stagetest *t, const char *tag, size_t frames, int ch);

/** JACK (@p jack_prefix, @p rate, @p block), gpufir started from @p bin and READY within
 *  @p ready_s, the ports connected, @p settle_ms of audio, then the stream's blocks, xruns and READY
 *  count noted: the later checks are against them. */
void gf_stagetest_start(struct gf_stagetest *t, const char *bin, const char *jack_prefix, uint32_t rate,
			uint32_t block, double ready_s, int settle_ms);

/** The status now into @p st: the stream ran on with no xrun and no restart, and the status socket
 *  shows "<stage>_<db_key>: @p db" and "<stage>_bypass: @p bypass", else the test dies. */
void gf_stagetest_status(struct gf_stagetest *t, const char *stage, const char *db_key, const char *db,
			 const char *bypass, const char *what, char *st, size_t len);

/** Send @p cmd (a Get or Set of the stage) and return its reply, in which bypass is @p bypass and the
 *  member @p db_key is @p db, else the test dies. */
const char *gf_stagetest_call(struct gf_stagetest *t, const char *cmd, const char *db_key, int bypass,
			      double db);

/** The test rewrote the config with @p what: the reload is applied live (no restart), else the test
 *  dies saying @p why. */
void gf_stagetest_reloaded(struct gf_stagetest *t, const char *what, const char *why);

/** No READY beyond the reloads' since gf_stagetest_start, else the test dies. */
void gf_stagetest_no_restart(struct gf_stagetest *t);

/** Stop gpufir (SIGTERM), close the client and free everything: the test passed. */
void gf_stagetest_close(struct gf_stagetest *t);

#endif
