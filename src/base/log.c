#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

static atomic_int log_level = GF_LOG_INFO;

void gf_log_set_level(enum gf_log_level level)
{
	atomic_store(&log_level, (int)level);
}

enum gf_log_level gf_log_get_level(void)
{
	return (enum gf_log_level)atomic_load(&log_level);
}

int gf_log_parse_level(const char *s, enum gf_log_level *out)
{
	static const struct {
		const char *name;
		enum gf_log_level level;
	} names[] = {
		{"error", GF_LOG_ERR}, {"warning", GF_LOG_WARN}, {"notice", GF_LOG_NOTICE},
		{"info", GF_LOG_INFO}, {"debug", GF_LOG_DEBUG},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i].name) == 0) {
			*out = names[i].level;
			return 0;
		}
	}
	return GF_E_INVAL;
}

void gf_log(enum gf_log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gf_vlog(level, fmt, ap);
	va_end(ap);
}

void gf_vlog(enum gf_log_level level, const char *fmt, va_list ap)
{
	if ((int)level > atomic_load(&log_level))
		return;
	/* One fprintf per line so lines from different threads do not interleave. */
	char line[1024];
	vsnprintf(line, sizeof(line), fmt, ap);
	gf_str_printable(line); /* one message, one line; no escapes from file contents */
	if (getenv("JOURNAL_STREAM"))
		fprintf(stderr, "<%d>%s\n", (int)level, line);
	else
		fprintf(stderr, "gpufir: %s%s\n",
			level == GF_LOG_ERR    ? "error: "
			: level == GF_LOG_WARN ? "warning: "
					       : "",
			line);
}
