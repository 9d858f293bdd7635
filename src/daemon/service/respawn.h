/**
 * @file respawn.h
 * Restarting the daemon in place after an audio-server loss that cannot be
 * recovered inside the process (PortAudio's JACK host API holds a stream it
 * can neither close nor terminate once the server is gone; see live.h,
 * gf_live_restart_required()).
 *
 * The daemon re-executes its own binary (`/proc/self/exe`) with its original
 * argv. The PID stays, so systemd's MAINPID, NOTIFY_SOCKET and the watchdog
 * (WATCHDOG_PID) stay valid and systemd sees no restart. The retry state
 * (attempt, backoff, when audio was lost) travels to the new image in the
 * environment variable GPUFIR_RESPAWN; the new image then retries the audio
 * device with exponential backoff from its control loop (docs/daemon.md).
 *
 * Control thread only; not RT-safe.
 */
#ifndef GPUFIR_RESPAWN_H
#define GPUFIR_RESPAWN_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define GF_RESPAWN_ENV "GPUFIR_RESPAWN"
#define GF_RESPAWN_MIN_MS 500u	 /**< first wait for the audio device */
#define GF_RESPAWN_MAX_MS 10000u /**< longest wait between attempts */

/** What one image tells the next. */
struct gf_respawn {
	uint32_t attempt;    /**< the next attempt to open the audio device (1 = first of this outage) */
	uint32_t backoff_ms; /**< wait before that attempt, GF_RESPAWN_MIN_MS..GF_RESPAWN_MAX_MS */
	uint32_t respawns;   /**< re-executions since the service started (this one included) */
	uint32_t outages;    /**< audio losses since the service started (this one included) */
	int ready;	     /**< READY=1 was sent: systemd considers the service started */
	uint64_t lost_us;    /**< CLOCK_MONOTONIC µs when audio was lost (survives exec) */
	uint64_t started_us; /**< CLOCK_MONOTONIC µs when the service started */
};

/** Next wait after a failed attempt: twice @p ms, within GF_RESPAWN_MIN_MS..MAX_MS. */
uint32_t gf_respawn_next_backoff(uint32_t ms);

/**
 * The environment value: "attempt=N backoff_ms=M respawns=R outages=O
 * ready=0|1 lost_us=T started_us=S". @return 0, or GF_E_INVAL if it does not fit.
 */
int gf_respawn_format(const struct gf_respawn *r, char *buf, size_t len);

/**
 * Parse gf_respawn_format()'s text; out-of-range values are clamped (backoff
 * to MIN..MAX, attempt to >= 1). @return 0, or GF_E_INVAL when malformed
 * (*r is then zeroed).
 */
int gf_respawn_parse(const char *s, struct gf_respawn *r);

/**
 * Take this image's respawn state: read GPUFIR_RESPAWN and remove it from the
 * environment (so that nothing started later inherits it). Call before any
 * thread exists (it edits the environment).
 * @return 1 if this image was re-executed (*r filled), 0 on a fresh start or
 * a malformed value (*r zeroed).
 */
int gf_respawn_take(struct gf_respawn *r);

/**
 * Re-execute the running binary in place: mark every descriptor above 2
 * close-on-exec (libraries such as JACK's open theirs without), then
 * execve("/proc/self/exe", argv, environ + GPUFIR_RESPAWN=<r>). Other threads
 * vanish with the old image, whatever state they are in. The signal mask is
 * inherited: a signal the caller keeps blocked (SIGTERM during the exec)
 * stays pending for the new image. Safe to call while other threads run (the
 * environment is copied, not edited).
 * @return only on failure: GF_E_INVAL (no argv), GF_E_NOMEM or GF_E_SYSTEM,
 * with why in @p eb.
 */
int gf_respawn_exec(char *const *argv, const struct gf_respawn *r, struct gf_errbuf *eb);

#endif
