/**
 * @file error.h
 * Error codes shared by every gpufir module.
 *
 * Functions return 0 on success or a negative GF_E_* code; gf_strerror()
 * maps each code to a message. Modules that can say more (file, line,
 * setting) fill a struct gf_errbuf supplied by the caller.
 *
 * Layer base (src/base/: errors, logging, time histograms): used by every
 * other layer and by cuda/. Any thread. Nothing here allocates or blocks
 * except the log functions, which write to stderr and are never called on
 * the audio path.
 */
#ifndef GPUFIR_ERROR_H
#define GPUFIR_ERROR_H

#include <stdarg.h>
#include <stddef.h>

enum gf_error {
	GF_OK = 0,
	GF_E_NOMEM = -1,	/**< out of host memory */
	GF_E_INVAL = -2,	/**< invalid argument (programming error) */
	GF_E_CONFIG = -3,	/**< configuration file invalid */
	GF_E_IO = -4,		/**< file could not be read or written */
	GF_E_FORMAT = -5,	/**< unsupported or corrupt audio/filter file */
	GF_E_RATE = -6,		/**< sample rate mismatch */
	GF_E_NOGPU = -7,	/**< no usable CUDA device */
	GF_E_CUDA = -8,		/**< a CUDA or cuFFT call failed */
	GF_E_FFT = -9,		/**< FFTW planning failed */
	GF_E_TOOLONG = -10,	/**< filter longer than the engine was sized for */
	GF_E_BUSY = -11,	/**< a previous filter swap is still in progress */
	GF_E_AUDIO = -12,	/**< audio device error (PortAudio) */
	GF_E_NODEVICE = -13,	/**< audio device not found */
	GF_E_UNSUPPORTED = -14, /**< feature not built in or not available */
	GF_E_NONFINITE = -15,	/**< NaN or Inf where a finite value is required */
	GF_E_INTERRUPTED = -16, /**< stopped by a signal */
	GF_E_SYSTEM = -17,	/**< a system call failed (see errno) */
	GF_E_TIMEOUT = -18,	/**< a wait reached its deadline with the work still in flight */
	GF_E_LAST = -19		/**< one past the last code; keep last */
};

/** Message for a GF_* code; never NULL, "unknown error" for unknown codes. */
const char *gf_strerror(int code);

/** Caller-supplied buffer for a detailed message (file:line: setting: why). */
struct gf_errbuf {
	char msg[512];
};

/**
 * Replace control bytes (newline, escape, ... DEL) in @p s with '?', in place:
 * text from files and configs is echoed in messages, the journal and the
 * status block, where a newline would inject lines and an escape would reach
 * the terminal.
 */
void gf_str_printable(char *s);

/** printf into an errbuf (control bytes made '?': gf_str_printable); a NULL errbuf is allowed and ignored. */
void gf_errbuf_set(struct gf_errbuf *eb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** gf_errbuf_set with a va_list (the CUDA module reports through it). */
void gf_errbuf_vset(struct gf_errbuf *eb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/**
 * Exit codes of the gpufir program (named, as CamillaDSP does). systemd's
 * journal names a status by LSB's table (systemd.exec(5)): 2 reads
 * INVALIDARGUMENT and a bad configuration is 6, NOTCONFIGURED (it was 3,
 * which reads NOTIMPLEMENTED; 3 is not used again). The units'
 * RestartPreventExitStatus= lists 2 and 6.
 */
enum gf_exit {
	GF_EXIT_OK = 0,
	GF_EXIT_FAILURE = 1,	  /**< unspecified failure */
	GF_EXIT_USAGE = 2,	  /**< bad command line */
	GF_EXIT_CONFIG = 6,	  /**< bad configuration or filter file */
	GF_EXIT_IO = 4,		  /**< input/output file error */
	GF_EXIT_PROCESS = 5,	  /**< processing error (engine, GPU, audio device) */
	GF_EXIT_INTERRUPTED = 130 /**< stopped by SIGINT/SIGTERM before finishing */
};

/** Exit code that fits an error code. */
int gf_exit_code(int err);

#endif
