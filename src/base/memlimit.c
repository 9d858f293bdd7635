#include "memlimit.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The first number in @p path (or after @p key on a line starting with it). */
static int read_u64(const char *path, const char *key, uint64_t *v)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char line[512];
	int ok = -1;
	unsigned long long x;
	while (ok && fgets(line, sizeof(line), f)) {
		const char *p = line;
		if (key) {
			if (strncmp(line, key, strlen(key)) != 0)
				continue;
			p += strlen(key);
		}
		if (sscanf(p, " %llu", &x) == 1) {
			*v = (uint64_t)x;
			ok = 0;
		}
		if (!key)
			break;
	}
	fclose(f);
	return ok;
}

static uint64_t cgroup_room(void)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return UINT64_MAX;
	char line[1024], lim[1200], use[1200];
	uint64_t room = UINT64_MAX, max, cur;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		const char *path = NULL;
		int v2 = strncmp(line, "0::", 3) == 0;
		if (v2)
			path = line + 3;
		else if (strstr(line, ":memory:"))
			path = strstr(line, ":memory:") + 8;
		if (!path)
			continue;
		snprintf(lim, sizeof(lim),
			 v2 ? "/sys/fs/cgroup%s/memory.max" : "/sys/fs/cgroup/memory%s/memory.limit_in_bytes",
			 path);
		snprintf(use, sizeof(use),
			 v2 ? "/sys/fs/cgroup%s/memory.current"
			    : "/sys/fs/cgroup/memory%s/memory.usage_in_bytes",
			 path);
		if (read_u64(lim, NULL, &max) == 0 && read_u64(use, NULL, &cur) == 0) /* "max": no number */
			room = max > cur ? (max - cur < room ? max - cur : room) : 0;
	}
	fclose(f);
	return room;
}

uint64_t gf_mem_available(void)
{
	uint64_t best = UINT64_MAX, kb;
	if (read_u64("/proc/meminfo", "MemAvailable:", &kb) == 0)
		best = kb * 1024;
	uint64_t cg = cgroup_room();
	best = cg < best ? cg : best;
	struct rlimit rl;
	uint64_t pages;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    read_u64("/proc/self/statm", NULL, &pages) == 0) {
		uint64_t used = pages * (uint64_t)sysconf(_SC_PAGESIZE), lim = (uint64_t)rl.rlim_cur;
		uint64_t room = lim > used ? lim - used : 0;
		best = room < best ? room : best;
	}
	return best;
}

void gf_mem_text(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (1u << 30))
		snprintf(buf, len, "%.1f GiB", (double)bytes / (1u << 30));
	else
		snprintf(buf, len, "%.1f MiB", (double)bytes / (1u << 20));
}

/* Allocate @p bytes and give them back at once: whether the allocator can,
 * now. Pages are not touched. The volatile pointer keeps the compiler from
 * pairing malloc and free away. */
static int can_allocate(uint64_t bytes)
{
	if (bytes > SIZE_MAX)
		return 0;
	void *volatile p = malloc((size_t)bytes);
	int ok = p != NULL;
	free(p);
	return ok;
}

int gf_mem_check(uint64_t need, const char *what, struct gf_errbuf *eb)
{
	int locked = gf_mem_all_locked();
	uint64_t have = locked ? gf_mem_lock_available() : gf_mem_available();
	if (need <= have && (locked || can_allocate(need)))
		return 0;
	char sn[32], sh[32];
	gf_mem_text(need, sn, sizeof(sn));
	gf_mem_text(have, sh, sizeof(sh));
	if (need <= have)
		gf_errbuf_set(eb, "%s needs about %s of memory, which this process cannot allocate now", what,
			      sn);
	else
		gf_errbuf_set(
			eb, "%s needs about %s of %smemory, more than the %s this process may still use (%s)",
			what, sn, locked ? "locked " : "", sh,
			locked ? "RLIMIT_MEMLOCK less what is locked, and free memory"
			       : "the least of free memory, the cgroup's limit and ulimit -v");
	return GF_E_NOMEM;
}

/* 1 if @p n has no prime factor above 7. */
static int smooth(uint64_t n)
{
	static const unsigned primes[] = {2, 3, 5, 7};
	for (size_t i = 0; n > 1 && i < sizeof(primes) / sizeof(primes[0]); i++)
		while (n % primes[i] == 0)
			n /= primes[i];
	return n <= 1;
}

uint64_t gf_mem_fft_plan_bytes(uint64_t n, size_t real_size)
{
	uint64_t bytes = n * real_size;
	return (smooth(n) ? bytes * 5 / 2 : bytes * 12) + ((uint64_t)4 << 20);
}

static atomic_int all_locked;

uint64_t gf_mem_lock_available(void)
{
	uint64_t have = gf_mem_available(), kb = 0;
	struct rlimit rl;
	if (geteuid() == 0 || getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return have;
	if (read_u64("/proc/self/status", "VmLck:", &kb) != 0)
		kb = 0;
	uint64_t used = kb * 1024u, lim = (uint64_t)rl.rlim_cur;
	uint64_t room = lim > used ? lim - used : 0;
	return room < have ? room : have;
}

void gf_mem_note_all_locked(void)
{
	atomic_store(&all_locked, 1);
}

int gf_mem_all_locked(void)
{
	return atomic_load(&all_locked);
}
