/*
 * The temporary output's life outside the normal path: a fatal signal
 * removes it (the handler in main.c calls gf_offline_temp_unlink_now), and
 * temporaries that a killed run (kill -9, a power cut) left behind are
 * removed by the next run that writes into the same directory. The name
 * carries the writer's pid, ".OUT.gpufir-PID-XXXXXX", so "left behind" is
 * provable: that process no longer exists.
 *
 * Set-up (reading the config and filter files, designing, pre-convolving,
 * making the engine) writes nothing, so a stop signal then ends the process
 * at once (gf_offline_in_setup) instead of when the build is done: a 16M-tap
 * design or a huge taps file takes seconds, and Ctrl-C must not wait.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "offline.h"
#include "offline_internal.h"

/* A run on another host (NFS) has a pid that means nothing here: its file is
 * written continuously, so only a temporary this old is ever removed. */
#define STALE_AGE_S 60

/*
 * One slot per file being written: a batch's lanes each write one at a time.
 * A slot is claimed by its thread (0 -> 2), filled, then published (1); the
 * signal handler takes published slots (1 -> 0) and unlinks them.
 */
#define TEMP_SLOTS 256 /* the batch's most lanes */
static char temp_path[TEMP_SLOTS][4096];
static atomic_int temp_state[TEMP_SLOTS]; /* lock-free: read by a signal handler */
static _Thread_local int temp_slot = -1;  /* this thread's slot */

static atomic_int setting_up; /* between the start of a run and its output's creation */

void gf_offline_setup_phase(int on)
{
	atomic_store(&setting_up, on);
}

int gf_offline_in_setup(void)
{
	return atomic_load(&setting_up);
}

void gf_offline_temp_register(const char *path)
{
	atomic_store(&setting_up, 0);
	if (strlen(path) >= sizeof(temp_path[0]))
		return; /* cannot happen: the name is cut to 200 bytes and PATH_MAX */
	for (int i = 0; i < TEMP_SLOTS; i++) {
		int free_state = 0;
		if (!atomic_compare_exchange_strong(&temp_state[i], &free_state, 2))
			continue;
		memcpy(temp_path[i], path, strlen(path) + 1);
		atomic_store(&temp_state[i], 1);
		temp_slot = i;
		return;
	}
}

void gf_offline_temp_forget(void)
{
	if (temp_slot >= 0)
		atomic_store(&temp_state[temp_slot], 0);
	temp_slot = -1;
}

void gf_offline_temp_unlink_now(void)
{
	for (int i = 0; i < TEMP_SLOTS; i++) {
		int published = 1;
		if (atomic_compare_exchange_strong(&temp_state[i], &published, 0))
			unlink(temp_path[i]); /* async-signal-safe */
	}
}

/* The pid in ".NAME.gpufir-PID-XXXXXX", or 0 when @p name is not such a name. */
static long temp_pid(const char *name)
{
	const char *g = name[0] == '.' ? strstr(name, ".gpufir-") : NULL;
	if (!g)
		return 0;
	const char *last;
	while ((last = strstr(g + 1, ".gpufir-")))
		g = last;
	char *end;
	long pid = strtol(g + 8, &end, 10);
	if (pid <= 0 || *end != '-' || strlen(end + 1) != 6)
		return 0;
	return pid;
}

void gf_offline_temp_sweep(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	time_t now = time(NULL);
	for (struct dirent *e; (e = readdir(d));) {
		long pid = temp_pid(e->d_name);
		if (!pid || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid() || now - st.st_mtime < STALE_AGE_S)
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			gf_notice(
				"removed %s/%s (%lld bytes): the unfinished output of gpufir pid %ld, which "
				"no longer runs",
				dir, e->d_name, (long long)st.st_size, pid);
	}
	closedir(d);
}
