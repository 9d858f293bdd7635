#include "notify.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "clock.h"
#include "error.h"

/* sd_notify() returns > 0 when sent, 0 when NOTIFY_SOCKET is unset, < 0 on error. */
static int send_state(const char *state)
{
	return sd_notify(0, state) < 0 ? GF_E_SYSTEM : 0;
}

uint64_t gf_notify_monotonic_usec(void)
{
	return gf_now_ns() / 1000u;
}

int gf_notify_ready(void)
{
	return send_state("READY=1");
}

int gf_notify_reloading(void)
{
	char msg[64];
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, gf_notify_monotonic_usec());
	return send_state(msg);
}

int gf_notify_stopping(void)
{
	return send_state("STOPPING=1");
}

int gf_notify_status(const char *text)
{
	char msg[1024];
	int n = snprintf(msg, sizeof(msg), "STATUS=%s", text);
	if (n < 0)
		return GF_E_INVAL;
	/* STATUS is a single line: a newline would start a new (bogus) assignment. */
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return send_state(msg);
}

int gf_notify_watchdog(void)
{
	return send_state("WATCHDOG=1");
}

uint64_t gf_notify_watchdog_usec(void)
{
	uint64_t usec = 0;
	/* Checks WATCHDOG_PID against getpid(): a child of ours is not the watched one. */
	if (sd_watchdog_enabled(0, &usec) <= 0)
		return 0;
	return usec;
}
