/*
 * The CPU backend's FFTW wisdom file (fft_wisdom.h). Wisdom only records
 * which of FFTW's own algorithms the planner chose for a problem on this
 * machine; FFTW checks on import that it comes from the same library and
 * configuration, and a plan it names is made only where it applies. A file
 * that is missing, too large or refused is ignored and rewritten at the next
 * new plan; writing failures are only logged (a read-only home, a service).
 */
#include <errno.h>
#include <fcntl.h>
#include <fftw3.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cost.h"
#include "fft_wisdom.h"
#include "log.h"
#include "safe_file.h"

#define WISDOM_NAME "fftwf-wisdom"
#define WISDOM_MAX_BYTES (256 * 1024)

static int g_loaded; /* under the planner lock */

/* WISDOM_NAME in the cost cache's folder. @return 0, or -1 where the cost cache is off. */
static int wisdom_path(char *buf, size_t len)
{
	char costs[4096];
	if (gf_cost_cache_path(costs, sizeof(costs)) != 0)
		return -1;
	const char *slash = strrchr(costs, '/');
	int n = slash ? snprintf(buf, len, "%.*s/%s", (int)(slash - costs), costs, WISDOM_NAME)
		      : snprintf(buf, len, "%s", WISDOM_NAME);
	return n > 0 && (size_t)n < len ? 0 : -1;
}

void gf_fft_wisdom_load(void)
{
	char path[4200], *text = NULL;
	size_t len = 0;
	struct gf_errbuf eb = {{0}};
	if (g_loaded)
		return;
	g_loaded = 1;
	if (wisdom_path(path, sizeof(path)) != 0 || access(path, F_OK) != 0)
		return;
	if (gf_file_read_all(path, "FFTW wisdom", WISDOM_MAX_BYTES, &text, &len, &eb) != 0) {
		gf_debug("cpu fft: %s", eb.msg);
		return;
	}
	if (strncmp(text, "(fftw-3", 7) == 0 && fftwf_import_wisdom_from_string(text))
		gf_debug("cpu fft: FFTW wisdom from %s", path);
	else
		gf_debug("cpu fft: %s is not FFTW wisdom of this library: ignored", path);
	free(text);
}

void gf_fft_wisdom_store(void)
{
	char path[4200], tmp[4300];
	if (wisdom_path(path, sizeof(path)) != 0)
		return;
	char *text = fftwf_export_wisdom_to_string();
	if (!text)
		return;
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	gf_cost_cache_make_parent(path);
	size_t len = strlen(text);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	int ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
	int saved = errno;
	if (fd >= 0 && close(fd) != 0)
		ok = 0;
	if (ok && rename(tmp, path) != 0) {
		saved = errno;
		ok = 0;
	}
	if (ok) {
		gf_debug("cpu fft: FFTW wisdom written to %s", path);
	} else {
		if (fd >= 0)
			unlink(tmp);
		gf_debug("cpu fft: cannot write FFTW wisdom %s: %s", path, strerror(saved));
	}
	free(text);
}

void gf_fft_wisdom_plan_pair(int n, float *time, fftwf_complex *spec, fftwf_plan *r2c, fftwf_plan *c2r)
{
	/* Asked of the wisdom first: the planner's search is most of a short offline
	 * run's set-up. The same choices, so the same plans. */
	const unsigned r2c_flags = FFTW_ESTIMATE | FFTW_PRESERVE_INPUT, c2r_flags = FFTW_ESTIMATE;
	gf_fft_wisdom_load();
	*r2c = fftwf_plan_dft_r2c_1d(n, time, spec, r2c_flags | FFTW_WISDOM_ONLY);
	*c2r = fftwf_plan_dft_c2r_1d(n, spec, time, c2r_flags | FFTW_WISDOM_ONLY);
	int searched = !*r2c || !*c2r;
	if (!*r2c)
		*r2c = fftwf_plan_dft_r2c_1d(n, time, spec, r2c_flags);
	if (!*c2r)
		*c2r = fftwf_plan_dft_c2r_1d(n, spec, time, c2r_flags);
	if (searched && *r2c && *c2r)
		gf_fft_wisdom_store();
}
