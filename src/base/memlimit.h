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

#include <stdint.h>

/** Bytes available, or UINT64_MAX when nothing could be read. */
uint64_t gf_mem_available(void);

/**
 * Bytes this process may still lock in RAM (mlock, mlockall): the room under
 * RLIMIT_MEMLOCK less what is locked already (VmLck), or no limit for root
 * (CAP_IPC_LOCK) and an unlimited RLIMIT_MEMLOCK; never more than
 * gf_mem_available(), since locked memory must be resident.
 */
uint64_t gf_mem_lock_available(void);

/** Record that mlockall(MCL_FUTURE) is in force: every later allocation is locked. Any thread. */
void gf_mem_note_all_locked(void);
/** 1 once gf_mem_note_all_locked() was called. Any thread. */
int gf_mem_all_locked(void);

#endif
