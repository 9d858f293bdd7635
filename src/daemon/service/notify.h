/**
 * @file notify.h
 * systemd service notification (sd_notify's protocol): READY, RELOADING,
 * STATUS, STOPPING and the watchdog. Every call is a no-op returning 0 when
 * the process was not started by systemd (NOTIFY_SOCKET unset), so the daemon
 * calls them unconditionally.
 *
 * No call blocks: a receiver whose queue is full gets the datagrams later, in
 * order, from the next call or gf_notify_flush(), which the daemon's loop
 * calls on every pass, every NOTIFY_RETRY_MS while something waits; such a
 * call returns GF_E_BUSY. A STATUS= or WATCHDOG=1 behind one of its kind
 * replaces it; at most 32 wait, and past that the oldest STATUS= or
 * WATCHDOG=1 goes first.
 *

 *
 * Control thread only (they send a datagram; not RT-safe).
 */
#ifndef GPUFIR_NOTIFY_H
#define GPUFIR_NOTIFY_H

#include <stdint.h>

/** "READY=1": start-up finished, audio flows. @return 0, GF_E_BUSY (kept) or GF_E_SYSTEM */
int gf_notify_ready(void);

/**
 * "RELOADING=1\nMONOTONIC_USEC=<now>": a reload begins. Must be followed by
 * gf_notify_ready() whether the reload succeeds or fails, or systemd keeps
 * the unit in "reloading".
 */
int gf_notify_reloading(void);

/** "STOPPING=1": shutdown begins. */
int gf_notify_stopping(void);

/** "STATUS=<text>": one line for `systemctl status`; newlines become spaces. */
int gf_notify_status(const char *text);

/** "WATCHDOG=1": keep-alive ping. */
int gf_notify_watchdog(void);

/** 1 while assignments wait for room in the receiver's queue. */
int gf_notify_pending(void);

/** Send what a full queue kept back, if anything. @return 0, GF_E_BUSY (still kept) or GF_E_SYSTEM */
int gf_notify_flush(void);

/**
 * The watchdog interval systemd expects pings within (WATCHDOG_USEC, honouring
 * WATCHDOG_PID), or 0 when no watchdog is enabled for this process.
 */
uint64_t gf_notify_watchdog_usec(void);

/** CLOCK_MONOTONIC now, in microseconds (the clock MONOTONIC_USEC uses). */
uint64_t gf_notify_monotonic_usec(void);

#endif
