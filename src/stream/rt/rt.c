#include "rt.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"
#include "memlimit.h"

#if defined(__SANITIZE_ADDRESS__)
#define GF_RT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GF_RT_SANITIZED 1
#endif
#endif

static atomic_flag fifo_warned = ATOMIC_FLAG_INIT;
static atomic_int memory_locked = -1; /* -1: not tried yet */

int gf_rt_set_fifo(pthread_t thread, int prio)
{
	int lo = sched_get_priority_min(SCHED_FIFO), hi = sched_get_priority_max(SCHED_FIFO);
	struct rlimit rl;
	if (geteuid() != 0 && getrlimit(RLIMIT_RTPRIO, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (rlim_t)hi > rl.rlim_cur)
		hi = (int)rl.rlim_cur;
	if (prio > hi)
		prio = hi;
	if (prio < lo)
		prio = lo;
	struct sched_param sp = {.sched_priority = prio};
	int err = hi >= lo ? pthread_setschedparam(thread, SCHED_FIFO, &sp) : EPERM;
	if (err) {
		if (!atomic_flag_test_and_set(&fifo_warned))
			gf_warn("no real-time priority for the audio worker (SCHED_FIFO: %s): expect "
				"dropouts at the tightest latencies; grant it with LimitRTPRIO= in the "
				"systemd unit or an rtprio entry in limits.conf, or raise latency_slack",
				strerror(err));
		return 0;
	}
	return prio;
}

int gf_rt_lock_memory(void)
{
	int state = atomic_load(&memory_locked);
	if (state >= 0)
		return state;
#ifdef GF_RT_SANITIZED
	gf_info("sanitizer build: not locking all memory (audio buffers are still locked)");
	state = 0;
#else
	struct rlimit rl;
	if (geteuid() != 0 && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		gf_warn("not locking process memory: RLIMIT_MEMLOCK is %llu KiB (set "
			"LimitMEMLOCK=infinity in the systemd unit); page faults may cause dropouts",
			(unsigned long long)(rl.rlim_cur / 1024));
		state = 0;
	} else if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
		gf_warn("mlockall failed (%s); page faults may cause dropouts", strerror(errno));
		state = 0;
	} else {
		state = 1;
		gf_mem_note_all_locked(); /* later builds check their memory against the locked budget */
	}
#endif
	atomic_store(&memory_locked, state);
	return state;
}
