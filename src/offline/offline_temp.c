/*
 * Set-up (reading the config and filter files, designing, pre-convolving,
 * making the engine) writes nothing, so a stop signal then ends the process
 * at once (gf_offline_in_setup) instead of when the build is done: a 16M-tap
 * design or a huge taps file takes seconds, and Ctrl-C must not wait. The
 * temporary output itself, its removal on a fatal signal and the sweep of
 * dead runs' temporaries are base's (temp_file.h).
 */
#include <stdatomic.h>

#include "offline.h"
#include "offline_internal.h"

static atomic_int setting_up; /* between the start of a run and its output's creation */

void gf_offline_setup_phase(int on)
{
	atomic_store(&setting_up, on);
}

int gf_offline_in_setup(void)
{
	return atomic_load(&setting_up);
}
