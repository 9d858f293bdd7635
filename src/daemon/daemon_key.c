/*
 * The control key (docs/api.md, "What a client may change"): a random secret
 * that makes a control API client the owner (`Authenticate`). It lives in a
 * file the service's user keeps: control_key_file, else the service's
 * StateDirectory (/var/lib/gpufir/control.key). The first start makes it
 * (mode 0600: the service's user only; the service runs with Group=audio,
 * so a group that may read it is the owner's choice: chgrp and chmod 0640);
 * later starts read it, as the owner may have written it. Control thread;
 * the key is never logged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "daemon_internal.h"
#include "log.h"
#include "safe_file.h"

#define KEY_BYTES 32 /* 256 bits, written as 64 hex digits */

/* control_key_file, else $STATE_DIRECTORY/control.key; @return 0 when there is none. */
static int key_path(const struct gf_config *c, char *path, size_t len)
{
	const char *sd = getenv("STATE_DIRECTORY");
	if (c->control_key_file)
		snprintf(path, len, "%s", c->control_key_file);
	else if (sd && *sd && !strchr(sd, ':'))
		snprintf(path, len, "%s/control.key", sd);
	else
		return 0;
	return 1;
}

/* A new random key in a file that did not exist (O_EXCL: never over another file). */
static int key_make(const char *path, char *key, size_t len, struct gf_errbuf *eb)
{
	unsigned char raw[KEY_BYTES];
	if (len < 2 * KEY_BYTES + 1 || getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		gf_errbuf_set(eb, "control key: no random bytes: %s", strerror(errno));
		return GF_E_SYSTEM;
	}
	for (size_t i = 0; i < KEY_BYTES; i++)
		snprintf(key + 2 * i, 3, "%02x", raw[i]);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		gf_errbuf_set(eb, "control_key_file %s: cannot create it: %s", path, strerror(errno));
		return GF_E_IO;
	}
	char line[2 * KEY_BYTES + 2];
	int n = snprintf(line, sizeof(line), "%s\n", key);
	int ok = write(fd, line, (size_t)n) == n;
	if (close(fd) != 0 || !ok) {
		unlink(path);
		gf_errbuf_set(eb, "control_key_file %s: cannot write it", path);
		return GF_E_IO;
	}
	gf_notice("control key made: %s", path);
	return 0;
}

/* The key in an existing file: its first line, at least 16 characters. */
static int key_read(const char *path, char *key, size_t len, struct gf_errbuf *eb)
{
	char *buf = NULL;
	size_t n = 0;
	struct gf_errbuf why = {{0}};
	int r = gf_file_read_all(path, "control key file", 4096, &buf, &n, &why);
	if (r) {
		gf_errbuf_set(eb, "control_key_file: %s", why.msg);
		return r;
	}
	buf[strcspn(buf, "\r\n")] = '\0';
	size_t k = strlen(buf);
	if (k < 16 || k >= len) {
		gf_errbuf_set(eb, "control_key_file %s: the key must be one line of 16 to %zu characters",
			      path, len - 1);
		free(buf);
		return GF_E_CONFIG;
	}
	memcpy(key, buf, k + 1);
	memset(buf, 0, n);
	free(buf);
	return 0;
}

int gf_dm_key_load(const struct gf_config *c, char *key, size_t len, struct gf_errbuf *eb)
{
	char path[512];
	key[0] = '\0';
	if (!key_path(c, path, sizeof(path)))
		return 0;
	if (access(path, F_OK) != 0 && errno == ENOENT)
		return key_make(path, key, len, eb);
	return key_read(path, key, len, eb);
}
