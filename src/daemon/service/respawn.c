/* Re-executing the daemon in place (same PID) with its retry state in the
 * environment. See respawn.h for why, docs/daemon.md for the policy. */
#define _GNU_SOURCE /* close_range, environ */
#include "respawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SELF_EXE "/proc/self/exe"

extern char **environ;

uint32_t gf_respawn_next_backoff(uint32_t ms)
{
	if (ms < GF_RESPAWN_MIN_MS)
		return GF_RESPAWN_MIN_MS;
	return ms >= GF_RESPAWN_MAX_MS / 2 ? GF_RESPAWN_MAX_MS : ms * 2;
}

int gf_respawn_format(const struct gf_respawn *r, char *buf, size_t len)
{
	int n = snprintf(buf, len,
			 "attempt=%" PRIu32 " backoff_ms=%" PRIu32 " respawns=%" PRIu32 " outages=%" PRIu32
			 " ready=%d lost_us=%" PRIu64 " started_us=%" PRIu64,
			 r->attempt, r->backoff_ms, r->respawns, r->outages, r->ready ? 1 : 0, r->lost_us,
			 r->started_us);
	return n < 0 || (size_t)n >= len ? GF_E_INVAL : 0;
}

int gf_respawn_parse(const char *s, struct gf_respawn *r)
{
	uint32_t attempt, backoff, respawns, outages;
	int ready, end = 0;
	uint64_t lost, started;
	memset(r, 0, sizeof(*r));
	if (!s ||
	    sscanf(s,
		   "attempt=%" SCNu32 " backoff_ms=%" SCNu32 " respawns=%" SCNu32 " outages=%" SCNu32
		   " ready=%d lost_us=%" SCNu64 " started_us=%" SCNu64 "%n",
		   &attempt, &backoff, &respawns, &outages, &ready, &lost, &started, &end) != 7 ||
	    s[end] != '\0')
		return GF_E_INVAL;
	r->attempt = attempt ? attempt : 1;
	r->backoff_ms = backoff < GF_RESPAWN_MIN_MS   ? GF_RESPAWN_MIN_MS
			: backoff > GF_RESPAWN_MAX_MS ? GF_RESPAWN_MAX_MS
						      : backoff;
	r->respawns = respawns;
	r->outages = outages;
	r->ready = ready != 0;
	r->lost_us = lost;
	r->started_us = started;
	return 0;
}

int gf_respawn_take(struct gf_respawn *r)
{
	const char *v = getenv(GF_RESPAWN_ENV);
	int ok = v && gf_respawn_parse(v, r) == 0;
	if (!ok)
		memset(r, 0, sizeof(*r));
	unsetenv(GF_RESPAWN_ENV);
	return ok;
}

/* Descriptors above stderr must not survive the exec: ours are O_CLOEXEC, but
 * PortAudio, JACK and ALSA open theirs without, and every outage would leak
 * another set. close_range(CLOEXEC) needs Linux 5.11; else walk /proc/self/fd. */
static void cloexec_from_3(void)
{
	if (close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) == 0)
		return;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	int self = dirfd(d);
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		int fd = atoi(e->d_name);
		if (fd > 2 && fd != self) {
			int fl = fcntl(fd, F_GETFD);
			if (fl >= 0)
				fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
		}
	}
	closedir(d);
}

/* A copy of environ with GPUFIR_RESPAWN=@p value in place of any previous one. */
static char **env_with(const char *entry)
{
	size_t n = 0, klen = strlen(GF_RESPAWN_ENV);
	while (environ && environ[n])
		n++;
	char **env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], GF_RESPAWN_ENV, klen) != 0 || environ[i][klen] != '=')
			env[k++] = environ[i];
	env[k++] = (char *)entry;
	env[k] = NULL;
	return env;
}

int gf_respawn_exec(char *const *argv, const struct gf_respawn *r, struct gf_errbuf *eb)
{
	char entry[256];
	size_t klen = strlen(GF_RESPAWN_ENV);
	if (!argv || !argv[0]) {
		gf_errbuf_set(eb, "cannot restart in place: the command line is unknown");
		return GF_E_INVAL;
	}
	memcpy(entry, GF_RESPAWN_ENV "=", klen + 1);
	if (gf_respawn_format(r, entry + klen + 1, sizeof(entry) - klen - 1) != 0)
		return GF_E_INVAL;
	char **env = env_with(entry);
	if (!env) {
		gf_errbuf_set(eb, "cannot restart in place: out of memory");
		return GF_E_NOMEM;
	}
	cloexec_from_3();
	fflush(NULL); /* the log lines that explain the restart */
	execve(SELF_EXE, argv, env);
	int e = errno;
	free(env);
	gf_errbuf_set(eb, "cannot restart in place: execve %s: %s", SELF_EXE, strerror(e));
	return GF_E_SYSTEM;
}
