/**
 * @file memlimit.h
 * How much more memory this process may use before the kernel or its cgroup
 * refuses (or OOM-kills): the least of the system's MemAvailable, the room
 * left under the cgroup's memory limit (v2 memory.max, v1
 * memory.limit_in_bytes) and under RLIMIT_AS. For refusing a config that
 * cannot fit with a message, instead of dying by the OOM killer mid-build.
 * Control threads (reads /proc and /sys).
 */
#ifndef GPUFIR_MEMLIMIT_H
#define GPUFIR_MEMLIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/** Bytes available, or UINT64_MAX when nothing could be read. */
uint64_t gf_mem_available(void);

/**
 * Bytes this process may still lock in RAM (mlock, mlockall): the room under
 * RLIMIT_MEMLOCK less what is locked already (VmLck), or no limit for root
 * (CAP_IPC_LOCK) and an unlimited RLIMIT_MEMLOCK; never more than
 * gf_mem_available(), since locked memory must be resident.
 */
uint64_t gf_mem_lock_available(void);

/** "160.0 GiB" or "12.5 MiB", for messages. */
void gf_mem_text(uint64_t bytes, char *buf, size_t len);

/**
 * Whether @p need more bytes fit: within gf_mem_available() (the locked
 * budget once all memory is locked), and, unlocked, an allocation of that
 * size succeeds now (the kernel's own answer, under any overcommit policy).
 * For libraries that abort instead of failing (FFTW: its planner calls
 * abort() when its malloc fails): check before calling them.
 * @return 0, or GF_E_NOMEM with "WHAT needs about X of memory, more than the
 *         Y this process may still use (...)" in @p eb (may be NULL)
 */
int gf_mem_check(uint64_t need, const char *what, struct gf_errbuf *eb);

/**
 * Bytes FFTW's planner and plans may allocate for a pair of real transforms
 * (forward and inverse) of @p n points of @p real_size bytes, beyond the
 * arrays the caller passes. Measured (FFTW 3.3.10, FFTW_ESTIMATE, growth of
 * the peak address space over 66 sizes 2^a 3^b 5^c from 36864 to 2^24,
 * 2026-12-04): at most 0.79 of 2.5 x n x real_size + 4 MiB; sizes with a
 * large prime factor (Rader's algorithm) took up to 8 x n x real_size. So:
 * 2.5x for 7-smooth sizes, 12x for others, plus 4 MiB.
 */
uint64_t gf_mem_fft_plan_bytes(uint64_t n, size_t real_size);

/** Record that mlockall(MCL_FUTURE) is in force: every later allocation is locked. Any thread. */
void gf_mem_note_all_locked(void);
/** 1 once gf_mem_note_all_locked() was called. Any thread. */
int gf_mem_all_locked(void);

#endif
