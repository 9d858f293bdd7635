/*
 * Pre-scan of a config's text before libconfig sees it (libconfig 1.5, as in
 * Debian 12, has no include hook):
 *  - every @include is resolved as libconfig will resolve it and opened
 *    through gf_file_read_all, so a directory (libconfig's flex scanner calls
 *    exit(2) on a read error), a FIFO (open blocks forever) or a device is
 *    refused with a message; includes are scanned recursively, and the
 *    whole tree is bounded (GF_CFG_MAX_INCLUDES inclusions and
 *    GF_CFG_MAX_TREE_BYTES of text, counted each time a file is included, as
 *    libconfig reads it each time): a tree that fans out is refused at once;
 *  - integer literals without the L suffix that do not fit 32 bits are
 *    refused: libconfig 1.5 keeps only the low 32 bits (4294967424 -> 128);
 *  - the values are counted, and a text whose parse would not fit in the
 *    memory this process may still use is refused: under `ulimit -v`
 *    libconfig 1.5 dereferences a failed allocation (a segfault) on a huge
 *    inline array instead of reporting it.
 * A file swapped between this check and libconfig's own fopen is not caught;
 * the config's own text is handed to libconfig from this read, not reopened.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"
#include "memlimit.h"
#include "safe_file.h"

#define MAX_DEPTH 10 /* libconfig's MAX_INCLUDE_DEPTH */

/*
 * What libconfig 1.5 allocates to parse: a setting per value (config_setting_t
 * and its malloc overhead, the list's pointer array, doubled as it grows) and
 * its own buffer of each file's text. Measured with gpufir --check-config on
 * configs of 1M and 4M inline coeffs (2026-12-01): 85-86 bytes per value of
 * peak RSS and VmPeak, gpufir's own copy of the taps included. Rounded up.
 */
#define PARSE_BYTES_PER_VALUE 96u
#define PARSE_BYTES_PER_TEXT_BYTE 2u /* the text gpufir read, and libconfig's scanner buffer */

struct scan_totals {
	uint64_t values, bytes;
	unsigned includes; /* inclusions so far, the same file counted each time */
};

struct scan {
	const char *p, *end, *name, *include_dir;
	int line, depth;
	struct gf_errbuf *eb;
	struct scan_totals *tot;
};

static int is_ident(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '*';
}

static int is_ident_more(int ch)
{
	return is_ident(ch) || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
}

static int is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

/* One number token at s->p; refuse an integer that libconfig would truncate. */
static int scan_number(struct scan *s)
{
	const char *b = s->p, *q = s->p;
	if (*q == '+' || *q == '-')
		q++;
	int hex = q + 1 < s->end && q[0] == '0' && (q[1] == 'x' || q[1] == 'X');
	while (q < s->end) {
		char ch = *q;
		if (is_digit(ch) || is_ident(ch) || ch == '.' || ch == '_')
			q++;
		else if ((ch == '+' || ch == '-') && !hex && (q[-1] == 'e' || q[-1] == 'E'))
			q++;
		else
			break;
	}
	s->p = q;
	size_t n = (size_t)(q - b);
	char tok[72];
	if (n >= sizeof(tok))
		return 0; /* not a number libconfig accepts: its parser reports it */
	memcpy(tok, b, n);
	tok[n] = '\0';
	int l64 = n && (tok[n - 1] == 'L');
	if (!hex && (strpbrk(tok, ".eE") != NULL))
		return 0; /* floating point */
	char *e;
	errno = 0;
	long long v = hex ? (long long)strtoull(tok, &e, 16) : strtoll(tok, &e, 10);
	if (e == tok || (*e && strcmp(e, "L") && strcmp(e, "LL")))
		return 0;
	int over = errno == ERANGE;
	if (!l64 && !over)
		over = hex ? (unsigned long long)v > UINT_MAX : (v < INT_MIN || v > INT_MAX);
	if (!over)
		return 0;
	gf_errbuf_set(s->eb, "%s:%d: the integer %s does not fit in %s bits%s", s->name, s->line, tok,
		      l64 ? "64" : "32", l64 ? "" : " (write it with an L suffix for a 64-bit value)");
	return GF_E_CONFIG;
}

static int scan_text(const char *text, size_t len, const char *name, const char *include_dir, int depth,
		     struct scan_totals *tot, struct gf_errbuf *eb);

static int tree_too_big(const struct scan *s, const char *file)
{
	gf_errbuf_set(s->eb,
		      "%s:%d: @include \"%s\": the config and the files it includes exceed %llu MiB of "
		      "text in all (each inclusion counts): the includes fan out, or filters belong in "
		      "filter files",
		      s->name, s->line, file, (unsigned long long)(GF_CFG_MAX_TREE_BYTES >> 20));
	return GF_E_CONFIG;
}

/* @include "FILE" at the start of a line (libconfig's rule): check and scan FILE. */
static int scan_include(struct scan *s)
{
	const char *q = s->p + 8; /* after "@include" */
	while (q < s->end && (*q == ' ' || *q == '\t'))
		q++;
	if (q >= s->end || *q != '"')
		return 0; /* libconfig's parser reports the syntax error */
	char file[4096];
	size_t n = 0;
	for (q++; q < s->end && *q != '"'; q++) {
		if (*q == '\\' && q + 1 < s->end)
			q++;
		if (*q == '\n')
			s->line++;
		if (n + 1 < sizeof(file))
			file[n++] = *q;
	}
	file[n] = '\0';
	s->p = q < s->end ? q + 1 : q;
	if (s->depth + 1 >= MAX_DEPTH)
		return 0; /* libconfig refuses the nesting itself */
	if (++s->tot->includes > GF_CFG_MAX_INCLUDES) {
		gf_errbuf_set(s->eb,
			      "%s:%d: @include \"%s\": more than %u inclusions in all (each one counts, "
			      "of the same file again too): the includes fan out (files that include "
			      "others several times, over several levels)",
			      s->name, s->line, file, GF_CFG_MAX_INCLUDES);
		return GF_E_CONFIG;
	}
	char *path =
		file[0] == '/' || !s->include_dir ? strdup(file) : gf_cfg_join_path(s->include_dir, file);
	if (!path)
		return GF_E_NOMEM;
	char *buf = NULL;
	size_t blen = 0;
	struct gf_errbuf why;
	int r = gf_file_read_all(path, "@include file", GF_CFG_MAX_BYTES, &buf, &blen, &why);
	if (r == GF_E_IO)
		gf_errbuf_set(s->eb, "%s:%d: @include: %s", s->name, s->line, why.msg);
	else if (!r && s->tot->bytes + blen > GF_CFG_MAX_TREE_BYTES)
		r = tree_too_big(s, file);
	else if (!r)
		r = scan_text(buf, blen, path, s->include_dir, s->depth + 1, s->tot, s->eb);
	free(buf);
	free(path);
	return r == GF_E_IO ? GF_E_CONFIG : r;
}

/* Skip a string, or a comment; @return 1 when one was skipped. */
static int skip_string_or_comment(struct scan *s)
{
	const char *q = s->p;
	if (*q == '"') {
		for (q++; q < s->end && *q != '"'; q++) {
			if (*q == '\\' && q + 1 < s->end)
				q++;
			if (*q == '\n')
				s->line++;
		}
	} else if (*q == '#' || (*q == '/' && q + 1 < s->end && q[1] == '/')) {
		while (q < s->end && *q != '\n')
			q++;
		s->p = q;
		return 1;
	} else if (*q == '/' && q + 1 < s->end && q[1] == '*') {
		for (q += 2; q + 1 < s->end && !(q[0] == '*' && q[1] == '/'); q++)
			if (*q == '\n')
				s->line++;
		q++;
	} else {
		return 0;
	}
	s->p = q < s->end ? q + 1 : q;
	return 1;
}

static int scan_text(const char *text, size_t len, const char *name, const char *include_dir, int depth,
		     struct scan_totals *tot, struct gf_errbuf *eb)
{
	struct scan s = {text, text + len, name, include_dir, 1, depth, eb, tot};
	tot->bytes += len;
	int bol = 1, r = 0;
	while (!r && s.p < s.end) {
		char ch = *s.p;
		if (ch == '\n') {
			s.line++;
			s.p++;
			bol = 1;
			continue;
		}
		if (ch == ' ' || ch == '\t' || ch == '\r') {
			s.p++;
			continue;
		}
		if (bol && ch == '@' && (size_t)(s.end - s.p) >= 8 && memcmp(s.p, "@include", 8) == 0)
			r = scan_include(&s);
		else if (skip_string_or_comment(&s))
			;
		else if (is_ident(ch))
			while (s.p < s.end && is_ident_more(*s.p))
				s.p++;
		else if (is_digit(ch) || ((ch == '+' || ch == '-' || ch == '.') && s.p + 1 < s.end &&
					  (is_digit(s.p[1]) || s.p[1] == '.'))) {
			r = scan_number(&s);
			tot->values++;
		} else
			s.p++;
		bol = 0;
	}
	return r;
}

/* Refuse a parse that would not fit (libconfig would crash, not fail). */
static int check_parse_memory(const struct scan_totals *t, const char *name, struct gf_errbuf *eb)
{
	uint64_t need = t->values * PARSE_BYTES_PER_VALUE + t->bytes * PARSE_BYTES_PER_TEXT_BYTE;
	uint64_t have = gf_mem_available();
	if (need <= have)
		return 0;
	gf_errbuf_set(eb,
		      "%s: parsing its %llu values (%.1f MiB of text, includes too) needs about %.0f MiB of "
		      "memory, more than the %.0f MiB this process may still use (the least of free "
		      "memory, the cgroup's limit and ulimit -v): put long filters in a filter file "
		      "(file = \"taps.txt\" or a WAV), not inline coeffs",
		      name, (unsigned long long)t->values, (double)t->bytes / (1u << 20),
		      (double)need / (1u << 20), (double)have / (1u << 20));
	return GF_E_NOMEM;
}

int gf_cfg_prescan(const char *text, size_t len, const char *name, const char *include_dir,
		   struct gf_errbuf *eb)
{
	struct scan_totals t = {0, 0, 0};
	int r = scan_text(text, len, name, include_dir, 0, &t, eb);
	return r ? r : check_parse_memory(&t, name, eb);
}
