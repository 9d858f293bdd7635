#include "pinned.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gpu.h"
#include "log.h"
#include "memlimit.h"

static atomic_flag mlock_warned = ATOMIC_FLAG_INIT;
static atomic_flag pin_warned = ATOMIC_FLAG_INIT;

static size_t page_round(size_t bytes)
{
	long ps = sysconf(_SC_PAGESIZE);
	size_t page = ps > 0 ? (size_t)ps : 4096;
	return (bytes + page - 1) / page * page;
}

int gf_pinned_check(uint64_t need, const char *what, struct gf_errbuf *eb)
{
	uint64_t have = gf_mem_lock_available();
	if (need <= have)
		return 0;
	double mib = 1024.0 * 1024.0;
	if (gf_mem_all_locked()) {
		gf_errbuf_set(eb,
			      "%s need %.1f MiB of locked memory (all memory is locked: mlockall), more "
			      "than the %.1f MiB available (RLIMIT_MEMLOCK less what is locked, and free "
			      "memory): raise LimitMEMLOCK=, or use fewer channels or a smaller block",
			      what, need / mib, have / mib);
		return GF_E_NOMEM;
	}
	if (!atomic_flag_test_and_set(&mlock_warned))
		gf_warn("%s need %.1f MiB of locked memory, more than the %.1f MiB left under "
			"RLIMIT_MEMLOCK: they are not all locked, and page faults may cause dropouts; "
			"raise RLIMIT_MEMLOCK (LimitMEMLOCK= in the systemd unit)",
			what, need / mib, have / mib);
	return 0;
}

void *gf_pinned_alloc(size_t bytes)
{
	if (bytes == 0)
		return NULL;
	size_t len = page_round(bytes);
	void *p = NULL;
	if (posix_memalign(&p, 4096, len) != 0)
		return NULL;
	memset(p, 0, len); /* touch every page before locking it */
	if (mlock(p, len) != 0 && !atomic_flag_test_and_set(&mlock_warned))
		gf_warn("cannot lock audio buffers in memory (mlock: %s); page faults may cause "
			"dropouts: raise RLIMIT_MEMLOCK (LimitMEMLOCK= in the systemd unit)",
			strerror(errno));
	int err = gf_cuda_pin(p, len);
	if (err != 0 && err != GF_E_UNSUPPORTED && err != GF_E_NOGPU &&
	    !atomic_flag_test_and_set(&pin_warned))
		gf_warn("cannot page-lock audio buffers for the GPU (%s); copies will be staged",
			gf_strerror(err));
	return p;
}

void gf_pinned_free(void *p, size_t bytes)
{
	if (!p)
		return;
	if (gf_cuda_unpin(p)) /* kept pinned behind GPU work that may not end: never freed */
		return;
	munlock(p, page_round(bytes));
	free(p);
}
