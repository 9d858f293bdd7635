/*
 * sd_notify's protocol, sent without ever blocking. libsystemd's sd_notify()
 * writes to a blocking socket: once the receiver's queue is full (PID 1 busy,
 * a listener that does not read; Linux queues 10 datagrams by default) it
 * waits, and with it the control loop, which then answers no signal, watchdog
 * or status. Here the datagram goes out with MSG_DONTWAIT; what the receiver
 * cannot take yet is kept, merged with what follows (the newest of each
 * assignment), and sent by gf_notify_flush() on a later loop pass.
 */
#include "notify.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"

/* The assignments systemd has not received yet. READY, RELOADING and STOPPING exclude each
 * other: the newest is the state, and systemd reads one datagram's READY before its RELOADING. */
static struct {
	int ready, reloading, stopping, watchdog;
	uint64_t reload_usec;
	int has_status;
	char status[1024];
} pend;

static struct {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1]; /* NOTIFY_SOCKET it was opened for */
} out = {.fd = -1};

int gf_notify_pending(void)
{
	return pend.ready || pend.reloading || pend.stopping || pend.watchdog || pend.has_status;
}

static size_t compose(char *buf, size_t size)
{
	size_t n = 0;
#define ADD(...) (n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__))
	if (pend.stopping)
		ADD("%sSTOPPING=1", n ? "\n" : "");
	if (pend.ready)
		ADD("%sREADY=1", n ? "\n" : "");
	if (pend.reloading)
		ADD("%sRELOADING=1\nMONOTONIC_USEC=%" PRIu64, n ? "\n" : "", pend.reload_usec);
	if (pend.watchdog)
		ADD("%sWATCHDOG=1", n ? "\n" : "");
	if (pend.has_status)
		ADD("%sSTATUS=%s", n ? "\n" : "", pend.status);
#undef ADD
	return n < size ? n : size - 1;
}

/* A socket for NOTIFY_SOCKET @p path (a file, or '@' for the abstract namespace) and its address. */
static int open_for(const char *path, struct sockaddr_un *sa, socklen_t *len)
{
	size_t plen = strlen(path);
	if (plen >= sizeof(sa->sun_path))
		return -1;
	*sa = (struct sockaddr_un){.sun_family = AF_UNIX};
	memcpy(sa->sun_path, path, plen);
	if (path[0] == '@')
		sa->sun_path[0] = '\0';
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen);
	if (out.fd >= 0 && strcmp(out.path, path) == 0)
		return out.fd;
	if (out.fd >= 0)
		close(out.fd);
	out.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	snprintf(out.path, sizeof(out.path), "%s", path);
	return out.fd;
}

int gf_notify_flush(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	if (!gf_notify_pending())
		return 0;
	if (!path || !*path) { /* not under systemd: nothing to tell */
		memset(&pend, 0, sizeof(pend));
		return 0;
	}
	char msg[1400];
	compose(msg, sizeof(msg));
	if (path[0] != '/' && path[0] != '@') { /* another transport (vsock): libsystemd's own */
		memset(&pend, 0, sizeof(pend));
		return sd_notify(0, msg) < 0 ? GF_E_SYSTEM : 0;
	}
	struct sockaddr_un sa;
	socklen_t len;
	int fd = open_for(path, &sa, &len);
	if (fd < 0)
		return GF_E_SYSTEM;
	if (sendto(fd, msg, strlen(msg), MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa, len) >= 0) {
		memset(&pend, 0, sizeof(pend));
		return 0;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return GF_E_BUSY;	/* kept: the next call or flush sends it */
	memset(&pend, 0, sizeof(pend)); /* no listener (ECONNREFUSED, ENOENT): nobody to tell */
	return GF_E_SYSTEM;
}

uint64_t gf_notify_monotonic_usec(void)
{
	return gf_now_ns() / 1000u;
}

int gf_notify_ready(void)
{
	pend.ready = 1;
	pend.reloading = pend.stopping = 0;
	return gf_notify_flush();
}

int gf_notify_reloading(void)
{
	pend.reloading = 1;
	pend.reload_usec = gf_notify_monotonic_usec();
	pend.ready = pend.stopping = 0;
	return gf_notify_flush();
}

int gf_notify_stopping(void)
{
	pend.stopping = 1;
	pend.ready = pend.reloading = 0;
	return gf_notify_flush();
}

int gf_notify_status(const char *text)
{
	snprintf(pend.status, sizeof(pend.status), "%s", text);
	/* STATUS is a single line: a newline would start a new (bogus) assignment. */
	for (char *p = pend.status; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	pend.has_status = 1;
	return gf_notify_flush();
}

int gf_notify_watchdog(void)
{
	pend.watchdog = 1;
	return gf_notify_flush();
}

uint64_t gf_notify_watchdog_usec(void)
{
	uint64_t usec = 0;
	/* Checks WATCHDOG_PID against getpid(): a child of ours is not the watched one. */
	if (sd_watchdog_enabled(0, &usec) <= 0)
		return 0;
	return usec;
}
