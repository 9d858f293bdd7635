/*
 * sd_notify's protocol, sent without ever blocking. libsystemd's sd_notify()
 * writes to a blocking socket: once the receiver's queue is full (PID 1 busy,
 * a listener that does not read; Linux queues 10 datagrams by default) it
 * waits, and with it the control loop, which then answers no signal, watchdog
 * or status. Here each datagram goes out with MSG_DONTWAIT; those the
 * receiver cannot take yet wait here, in order, and gf_notify_flush() sends
 * them on a later loop pass. Waiting STATUS= and WATCHDOG=1 datagrams at the
 * tail are replaced by the newer one rather than repeated; READY, RELOADING
 * and STOPPING are never merged away (systemd, and the tests, count them).
 */
#include "notify.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"

#define WAIT_MAX 32 /* datagrams kept for a receiver that does not read: then the oldest go */
#define MSG_MAX 1100

enum kind { K_STATE, K_STATUS, K_WATCHDOG };

static struct {
	char msg[WAIT_MAX][MSG_MAX];
	enum kind kind[WAIT_MAX];
	unsigned head, n;
} waiting;

static struct {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1]; /* NOTIFY_SOCKET it was opened for */
} out = {.fd = -1};

int gf_notify_pending(void)
{
	return waiting.n > 0;
}

static unsigned slot(unsigned i)
{
	return (waiting.head + i) % WAIT_MAX;
}

/* Behind what waits: a STATUS or WATCHDOG after one of its kind replaces it; a full queue loses its
 * oldest STATUS or WATCHDOG first, else its oldest datagram. */
static void enqueue(enum kind k, const char *msg)
{
	unsigned tail = waiting.n ? slot(waiting.n - 1) : 0;
	if (waiting.n && k != K_STATE && waiting.kind[tail] == k) {
		snprintf(waiting.msg[tail], MSG_MAX, "%s", msg);
		return;
	}
	if (waiting.n == WAIT_MAX) {
		unsigned drop = 0;
		while (drop < waiting.n && waiting.kind[slot(drop)] == K_STATE)
			drop++;
		drop = drop < waiting.n ? drop : 0;
		for (unsigned i = drop; i > 0; i--) { /* close the gap: what came before moves up one */
			memcpy(waiting.msg[slot(i)], waiting.msg[slot(i - 1)], MSG_MAX);
			waiting.kind[slot(i)] = waiting.kind[slot(i - 1)];
		}
		waiting.head = slot(1);
		waiting.n--;
	}
	unsigned at = slot(waiting.n++);
	waiting.kind[at] = k;
	snprintf(waiting.msg[at], MSG_MAX, "%s", msg);
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
	if (!path || !*path) { /* not under systemd: nothing to tell */
		waiting.n = 0;
		return 0;
	}
	struct sockaddr_un sa;
	socklen_t len;
	int fd = -1;
	int unix_path = path[0] == '/' || path[0] == '@';
	if (unix_path && waiting.n && (fd = open_for(path, &sa, &len)) < 0) {
		waiting.n = 0;
		return GF_E_SYSTEM;
	}
	while (waiting.n) {
		const char *msg = waiting.msg[waiting.head];
		if (!unix_path) { /* another transport (vsock): libsystemd's own */
			int r = sd_notify(0, msg);
			waiting.head = slot(1);
			waiting.n--;
			if (r < 0)
				return GF_E_SYSTEM;
			continue;
		}
		if (sendto(fd, msg, strlen(msg), MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa, len) <
		    0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return GF_E_BUSY; /* kept: the next call or flush sends it */
			waiting.n = 0;		  /* no listener (ECONNREFUSED, ENOENT): nobody to tell */
			return GF_E_SYSTEM;
		}
		waiting.head = slot(1);
		waiting.n--;
	}
	return 0;
}

static int notify(enum kind k, const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	if (!path || !*path)
		return 0;
	enqueue(k, msg);
	return gf_notify_flush();
}

uint64_t gf_notify_monotonic_usec(void)
{
	return gf_now_ns() / 1000u;
}

int gf_notify_ready(void)
{
	return notify(K_STATE, "READY=1");
}

int gf_notify_reloading(void)
{
	char msg[64];
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, gf_notify_monotonic_usec());
	return notify(K_STATE, msg);
}

int gf_notify_stopping(void)
{
	return notify(K_STATE, "STOPPING=1");
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
	return notify(K_STATUS, msg);
}

int gf_notify_watchdog(void)
{
	return notify(K_WATCHDOG, "WATCHDOG=1");
}

uint64_t gf_notify_watchdog_usec(void)
{
	uint64_t usec = 0;
	/* Checks WATCHDOG_PID against getpid(): a child of ours is not the watched one. */
	if (sd_watchdog_enabled(0, &usec) <= 0)
		return 0;
	return usec;
}
