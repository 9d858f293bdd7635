/**
 * @file pinned.h
 * Host memory for audio buffers that the audio path touches and the GPU
 * reads: page-aligned, zeroed, locked in RAM (mlock: no page faults in the
 * callback) and page-locked for CUDA (gf_cuda_pin) so copies to and from the
 * GPU are direct DMA without a staging copy.
 *
 * Failing to lock is not an error: the memory stays usable. A failed mlock
 * is reported once per process as a warning (raise RLIMIT_MEMLOCK, e.g.
 * LimitMEMLOCK= in the systemd unit); no GPU or a CPU-only build is silent.
 *
 * Control thread only (allocates, makes system calls).
 */
#ifndef GPUFIR_PINNED_H
#define GPUFIR_PINNED_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/**
 * Before allocating @p need bytes of buffers for @p what ("the stream's
 * buffers"): check them against the locked-memory budget
 * (gf_mem_lock_available). Over it while mlockall(MCL_FUTURE) is in force,
 * the allocation would fail or exhaust RAM: GF_E_NOMEM, and @p eb says how
 * much is needed and available. Over it otherwise: one warning with both
 * figures (the buffers will not be locked; they still work). @return 0 or GF_E_NOMEM
 */
int gf_pinned_check(uint64_t need, const char *what, struct gf_errbuf *eb);

/** Allocate @p bytes (> 0) of zeroed, locked, pinned memory. @return NULL when out of memory. */
void *gf_pinned_alloc(size_t bytes);

/** Release memory from gf_pinned_alloc; @p bytes as allocated. Accepts NULL. */
void gf_pinned_free(void *p, size_t bytes);

#endif
