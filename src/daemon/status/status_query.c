/*
 * gpufir --status: the client side of the daemon's status socket. Apart from
 * daemon.c so that the program, which runs the daemon only through
 * libgpufir-live.so (live_module.h), links none of the daemon's objects.
 */
#include <stdio.h>

#include "daemon.h"
#include "error.h"
#include "log.h"
#include "status.h"

int gf_daemon_print_status(const char *socket_path)
{
	char buf[GF_STATUS_MAX];
	struct gf_errbuf eb = {{0}};
	int err = gf_status_query(socket_path ? socket_path : GF_STATUS_DEFAULT_PATH, buf, sizeof(buf), 2000,
				  &eb);
	if (err) {
		gf_err("%s", eb.msg[0] ? eb.msg : gf_strerror(err));
		return GF_EXIT_IO;
	}
	fputs(buf, stdout);
	return fflush(stdout) == 0 ? GF_EXIT_OK : GF_EXIT_IO;
}
