/**
 * @file log.h
 * Logging to stderr. Under systemd (JOURNAL_STREAM set) each line carries a
 * "<N>" priority prefix that journald turns into the message priority.
 * Control threads only: never call from the audio callback or GPU worker's
 * per-block path (report counters instead).
 */
#ifndef GPUFIR_LOG_H
#define GPUFIR_LOG_H

#include <stdarg.h>

enum gf_log_level { GF_LOG_ERR = 3, GF_LOG_WARN = 4, GF_LOG_NOTICE = 5, GF_LOG_INFO = 6, GF_LOG_DEBUG = 7 };

/** Messages above @p level are dropped. Default GF_LOG_INFO. */
void gf_log_set_level(enum gf_log_level level);
enum gf_log_level gf_log_get_level(void);
/** Parse "error", "warning", "notice", "info", "debug". @return 0 or GF_E_INVAL */
int gf_log_parse_level(const char *s, enum gf_log_level *out);

void gf_log(enum gf_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** gf_log with a va_list (the CUDA module logs through it). */
void gf_vlog(enum gf_log_level level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#define gf_err(...) gf_log(GF_LOG_ERR, __VA_ARGS__)
#define gf_warn(...) gf_log(GF_LOG_WARN, __VA_ARGS__)
#define gf_notice(...) gf_log(GF_LOG_NOTICE, __VA_ARGS__)
#define gf_info(...) gf_log(GF_LOG_INFO, __VA_ARGS__)
#define gf_debug(...) gf_log(GF_LOG_DEBUG, __VA_ARGS__)

#endif
