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

#endif
