/*
 * The cost cache (cost.h): a few "key value" lines under a header line,
 *
 *     gpufir-costs 1
 *     gpu_startup_ms 331.2
 *     gpu_exit_ms 92.5
 *
 * Written atomically (temporary file, rename); a file that does not parse
 * as a whole is ignored (the defaults serve) and replaced at the next write.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cost.h"
#include "safe_file.h"

#define HEADER "gpufir-costs 1"
#define MAX_BYTES 4096

void gf_cost_calib_defaults(struct gf_cost_calib *c)
{
	c->gpu_startup_ms = GF_COST_GPU_STARTUP_DEFAULT_MS;
	c->gpu_exit_ms = 0.0;
	c->gpu_ns_per_sample = GF_COST_GPU_NS_PER_SAMPLE_DEFAULT;
	c->measured = 0;
}

int gf_cost_cache_path(char *buf, size_t len)
{
	const char *env = getenv(GF_COST_CACHE_ENV);
	int n;
	if (env)
		n = *env ? snprintf(buf, len, "%s", env) : -1;
	else if (getenv("XDG_CACHE_HOME") && getenv("XDG_CACHE_HOME")[0] == '/')
		n = snprintf(buf, len, "%s/gpufir/costs", getenv("XDG_CACHE_HOME"));
	else if (getenv("HOME") && getenv("HOME")[0] == '/')
		n = snprintf(buf, len, "%s/.cache/gpufir/costs", getenv("HOME"));
	else
		n = -1;
	return n > 0 && (size_t)n < len ? 0 : GF_E_UNSUPPORTED;
}

/* One "key value" line into @p c. @return 0, 1 for an unknown key (ignored), -1 if malformed. */
static int parse_line(char *line, struct gf_cost_calib *c)
{
	char key[32];
	char *end;
	int used = 0;
	if (sscanf(line, "%31s %n", key, &used) != 1 || used == 0)
		return -1;
	errno = 0;
	double v = strtod(line + used, &end);
	if (end == line + used || errno || !isfinite(v) || v < 0.0 || v > 600000.0)
		return -1;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end)
		return -1;
	if (strcmp(key, "gpu_startup_ms") == 0) {
		if (v <= 0.0)
			return -1;
		c->gpu_startup_ms = v;
		c->measured = 1;
	} else if (strcmp(key, "gpu_exit_ms") == 0) {
		c->gpu_exit_ms = v;
	} else if (strcmp(key, "gpu_ns_per_sample") == 0) {
		c->gpu_ns_per_sample = v;
	} else {
		return 1; /* a newer gpufir's key */
	}
	return 0;
}

int gf_cost_cache_load(const char *path, struct gf_cost_calib *c)
{
	gf_cost_calib_defaults(c);
	char *buf = NULL;
	size_t len = 0;
	struct gf_errbuf eb = {{0}};
	if (gf_file_read_all(path, "cost cache", MAX_BYTES, &buf, &len, &eb))
		return GF_E_IO;
	struct gf_cost_calib got;
	gf_cost_calib_defaults(&got);
	int err = strlen(buf) == len ? 0 : GF_E_FORMAT, lineno = 0; /* a NUL inside: binary */
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
		if (lineno++ == 0)
			err = strcmp(line, HEADER) == 0 ? 0 : GF_E_FORMAT;
		else if (line[0] != '#' && parse_line(line, &got) < 0)
			err = GF_E_FORMAT;
	}
	if (lineno == 0)
		err = GF_E_FORMAT;
	free(buf);
	if (!err)
		*c = got;
	return err;
}

/* mkdir of the cache's folder (one level: $XDG_CACHE_HOME itself must exist, or ~/.cache is made too). */
void gf_cost_cache_make_parent(const char *path)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	if (mkdir(dir, 0755) == 0 || errno != ENOENT)
		return;
	char *up = strrchr(dir, '/');
	if (!up || up == dir)
		return;
	*up = '\0';
	(void)mkdir(dir, 0700); /* ~/.cache */
	*up = '/';
	(void)mkdir(dir, 0755);
}

int gf_cost_cache_store(const char *path, const struct gf_cost_calib *c, struct gf_errbuf *eb)
{
	char tmp[4200];
	int n = snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		gf_errbuf_set(eb, "cost cache: path too long");
		return GF_E_IO;
	}
	gf_cost_cache_make_parent(path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		gf_errbuf_set(eb, "cost cache %s: %s", tmp, strerror(errno));
		return GF_E_IO;
	}
	char text[512];
	int len = snprintf(text, sizeof(text),
			   HEADER "\n# measured costs gpufir's auto backend weighs (safe to delete)\n"
				  "gpu_startup_ms %.1f\ngpu_exit_ms %.1f\ngpu_ns_per_sample %.4f\n",
			   c->gpu_startup_ms, c->gpu_exit_ms, c->gpu_ns_per_sample);
	int ok = len > 0 && write(fd, text, (size_t)len) == len;
	int saved = errno;
	if (close(fd) != 0)
		ok = 0;
	if (ok && rename(tmp, path) == 0)
		return 0;
	saved = ok ? errno : saved;
	unlink(tmp);
	gf_errbuf_set(eb, "cost cache %s: %s", path, strerror(saved));
	return GF_E_IO;
}

void gf_cost_calib_current(struct gf_cost_calib *c)
{
	char path[4096];
	gf_cost_calib_defaults(c);
	if (gf_cost_cache_path(path, sizeof(path)) == 0)
		(void)gf_cost_cache_load(path, c); /* missing or corrupt: the defaults */
}
