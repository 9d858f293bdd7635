/*
 * Writing filter taps: text and 32-bit float WAV, the two forms other tools
 * (SoX, REW, CamillaDSP, BruteFIR, convolvers in DAWs) read. Both keep every
 * float exactly, so an exported filter loads back bit for bit. They write
 * into a descriptor the caller opened (a temporary beside the target) and
 * never remove or rename anything: what becomes of a failed file is the
 * caller's choice.
 */
#include <errno.h>
#include <sndfile.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "taps_io.h"

int gf_taps_write_text(int fd, const char *path, const float *h, uint32_t n, const char *comment,
		       struct gf_errbuf *eb)
{
	int dup_fd = dup(fd); /* fclose closes its own descriptor, not the caller's */
	FILE *fp = dup_fd >= 0 ? fdopen(dup_fd, "w") : NULL;
	if (!fp) {
		gf_errbuf_set(eb, "%s: cannot write: %s", path, strerror(errno));
		if (dup_fd >= 0)
			close(dup_fd);
		return GF_E_IO;
	}
	if (comment)
		fprintf(fp, "# %s\n", comment);
	for (uint32_t i = 0; i < n; i++)
		fprintf(fp, "%.9g\n", (double)h[i]); /* 9 digits: the float comes back exactly */
	int bad = ferror(fp);
	if (fclose(fp) != 0 || bad) {
		gf_errbuf_set(eb, "%s: write error: %s", path, strerror(errno));
		return GF_E_IO;
	}
	return 0;
}

int gf_taps_write_wav(int fd, const char *path, const float *h, uint32_t n, uint32_t rate,
		      struct gf_errbuf *eb)
{
	SF_INFO info = {.samplerate = (int)rate, .channels = 1, .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT};
	SNDFILE *sf = sf_open_fd(fd, SFM_WRITE, &info, SF_FALSE);
	if (!sf) {
		gf_errbuf_set(eb, "%s: cannot write: %s", path, sf_strerror(NULL));
		return GF_E_IO;
	}
	/* no normalisation or clipping: the taps are the filter, gain and all */
	sf_command(sf, SFC_SET_NORM_FLOAT, NULL, SF_FALSE);
	sf_count_t put = sf_write_float(sf, h, n);
	int r = 0;
	if (put != (sf_count_t)n) {
		gf_errbuf_set(eb, "%s: write error: %s", path, sf_strerror(sf));
		r = GF_E_IO;
	}
	if (sf_close(sf) != 0 && !r) {
		gf_errbuf_set(eb, "%s: write error on close", path);
		r = GF_E_IO;
	}
	return r;
}
