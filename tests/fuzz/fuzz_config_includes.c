/*
 * libFuzzer entry point: a config with @include files, through the file
 * loader (gf_config_load: the safe open, the include pre-scan, libconfig).
 * The input is split at "\n%%\n": the first part is main.conf, the next up
 * to 8 are inc1.conf .. inc8.conf, written into a temporary directory made
 * once per process, which also holds a directory "dir", a FIFO "fifo" and a
 * taps file "taps.txt" for configs to name. Loading must never exit, hang or
 * crash; it loads, or fails with a message and no object.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static int write_part(const char *name, const char *p, size_t n)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t w = fwrite(p, 1, n, f);
	return fclose(f) == 0 && w == n ? 0 : -1;
}

static int setup(void)
{
	if (dir[0])
		return 0;
	snprintf(dir, sizeof(dir), "%s", "/tmp/gpufir-fuzz-inc-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	char p[128];
	snprintf(p, sizeof(p), "%s/dir", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/fifo", dir);
	mkfifo(p, 0600);
	return write_part("taps.txt", "1.0 0.5 0.25\n", 13);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536 || setup())
		return 0;
	gf_log_set_level(GF_LOG_ERR);
	const char *p = (const char *)data, *end = p + size;
	for (int part = 0; part < 9; part++) {
		const char *q = memmem(p, (size_t)(end - p), "\n%%\n", 4);
		size_t n = q ? (size_t)(q - p) : (size_t)(end - p);
		char name[32];
		snprintf(name, sizeof(name), part ? "inc%d.conf" : "main.conf", part);
		if (write_part(name, p, n))
			return 0;
		if (!q) {
			for (int k = part + 1; k < 9; k++) { /* no stale includes from an earlier input */
				char stale[128];
				snprintf(stale, sizeof(stale), "%s/inc%d.conf", dir, k);
				unlink(stale);
			}
			break;
		}
		p = q + 4;
	}
	char main_path[128];
	snprintf(main_path, sizeof(main_path), "%s/main.conf", dir);
	struct gf_config *c = NULL;
	struct gf_errbuf eb = {{0}};
	int r = gf_config_load(main_path, &c, &eb);
	if (r == 0) {
		int ours = 1; /* build only what reads files of this directory */
		for (uint32_t i = 0; i < c->n_files; i++)
			ours &= strncmp(c->files[i], dir, strlen(dir)) == 0 && !strstr(c->files[i], "..");
		if (ours) {
			struct gf_filter_set *fs = NULL;
			if (!c->max_taps || c->max_taps > 4096)
				c->max_taps = 4096;
			if (gf_config_build(c, 8000, 2, &fs, &eb) == 0 && gf_filter_set_check_finite(fs))
				abort();
			gf_filter_set_free(fs);
		}
		gf_config_free(c);
	} else if (c != NULL || eb.msg[0] == '\0') {
		abort();
	}
	return 0;
}
