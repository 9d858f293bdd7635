#include "error.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const messages[] = {
	[0] = "success",
	[-GF_E_NOMEM] = "out of memory",
	[-GF_E_INVAL] = "invalid argument",
	[-GF_E_CONFIG] = "invalid configuration",
	[-GF_E_IO] = "input/output error",
	[-GF_E_FORMAT] = "unsupported or corrupt file format",
	[-GF_E_RATE] = "sample rate mismatch",
	[-GF_E_NOGPU] = "no usable CUDA device",
	[-GF_E_CUDA] = "CUDA error",
	[-GF_E_FFT] = "FFT planning failed",
	[-GF_E_TOOLONG] = "filter longer than the engine allows",
	[-GF_E_BUSY] = "a filter swap is already in progress",
	[-GF_E_AUDIO] = "audio device error",
	[-GF_E_NODEVICE] = "audio device not found",
	[-GF_E_UNSUPPORTED] = "not supported by this build",
	[-GF_E_NONFINITE] = "non-finite value (NaN or Inf)",
	[-GF_E_INTERRUPTED] = "interrupted",
	[-GF_E_SYSTEM] = "system call failed",
	[-GF_E_TIMEOUT] = "deadline missed: the work is still in flight",
};

const char *gf_strerror(int code)
{
	if (code > 0 || code <= GF_E_LAST)
		return "unknown error";
	const char *m = messages[-code];
	return m ? m : "unknown error";
}

void gf_errbuf_set(struct gf_errbuf *eb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gf_errbuf_vset(eb, fmt, ap);
	va_end(ap);
}

void gf_errbuf_vset(struct gf_errbuf *eb, const char *fmt, va_list ap)
{
	if (!eb)
		return;
	vsnprintf(eb->msg, sizeof(eb->msg), fmt, ap);
	gf_str_printable(eb->msg);
}

void gf_str_printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

int gf_exit_code(int err)
{
	switch (err) {
	case GF_OK:
		return GF_EXIT_OK;
	case GF_E_CONFIG:
	case GF_E_RATE:
	case GF_E_TOOLONG:
	case GF_E_NONFINITE:
		return GF_EXIT_CONFIG;
	case GF_E_IO:
	case GF_E_FORMAT:
		return GF_EXIT_IO;
	case GF_E_INTERRUPTED:
		return GF_EXIT_INTERRUPTED;
	case GF_E_INVAL:
		return GF_EXIT_USAGE;
	default:
		return GF_EXIT_PROCESS;
	}
}
