/*
 * Pre-scan of a config's text before libconfig sees it, and the opener of its
 * includes (libconfig 1.5, as in Debian 12, has no include hook):
 *  - every @include is resolved here (relative to the config's folder, or as
 *    written when absolute) and read once through gf_file_read_all (O_NONBLOCK
 *    open, fstat on the descriptor, regular files only, a size limit), so a
 *    directory (libconfig's flex scanner calls exit(2) on a read error), a
 *    FIFO (open blocks forever) or a device is refused with a message. The
 *    text read, its own includes rewritten the same way, goes into a memfd,
 *    and libconfig is handed `@include "/proc/self/fd/N"` with no include
 *    directory: it parses exactly the bytes that were checked, never a path
 *    of its own making (1.5 opens `<include dir>/<absolute path>`) nor a file
 *    swapped since. The whole tree is bounded (GF_CFG_MAX_INCLUDES
 *    inclusions and GF_CFG_MAX_TREE_BYTES of text, counted each time a file
 *    is included, as libconfig reads it each time): a tree that fans out is
 *    refused at once; a file that includes itself is refused as a cycle;
 *  - integer literals without the L suffix that do not fit 32 bits are
 *    refused: libconfig 1.5 keeps only the low 32 bits (4294967424 -> 128);
 *  - the values are counted, and a text whose parse would not fit in the
 *    memory this process may still use is refused: under `ulimit -v`
 *    libconfig 1.5 dereferences a failed allocation (a segfault) on a huge
 *    inline array instead of reporting it.
 * The scan and libconfig's scanner must agree on where an @include is (at
 * the start of a line, outside strings and comments): libconfig's rules.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* A file included: read and scanned once, its rewritten text in a memfd. */
struct inc_file {
	char *path;		/* as resolved: <include dir>/FILE, or FILE when absolute */
	int fd;			/* the memfd libconfig opens as /proc/self/fd/<fd> */
	int busy;		/* being scanned: an @include of it now is a cycle */
	struct scan_totals sub; /* its text and everything it includes, once */
};

struct gf_cfg_includes {
	struct inc_file *f;
	uint32_t n, cap;
};

/* A growing copy of the text being scanned, its includes rewritten. */
struct outbuf {
	char *p;
	size_t len, cap;
	int failed;
};

struct scan {
	const char *p, *end, *name, *include_dir;
	const char *copied; /* text before this is in out */
	int line, depth;
	struct gf_errbuf *eb;
	struct scan_totals *tot;
	struct gf_cfg_includes *inc;
	const struct gf_cfg_roots *roots; /* a guest's config: includes only under these */
	struct outbuf *out;
};

static void out_add(struct outbuf *o, const char *p, size_t n)
{
	if (o->failed)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap < o->len + n + 1)
			cap *= 2;
		char *q = realloc(o->p, cap);
		if (!q) {
			o->failed = 1;
			return;
		}
		o->p = q;
		o->cap = cap;
	}
	memcpy(o->p + o->len, p, n);
	o->len += n;
	o->p[o->len] = '\0';
}

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

static int scan_file(struct scan *s, const char *file, const char *path, uint32_t *idx);

static int tree_too_big(const struct scan *s, const char *file)
{
	gf_errbuf_set(s->eb,
		      "%s:%d: @include \"%s\": the config and the files it includes exceed %llu MiB of "
		      "text in all (each inclusion counts): the includes fan out, or filters belong in "
		      "filter files",
		      s->name, s->line, file, (unsigned long long)(GF_CFG_MAX_TREE_BYTES >> 20));
	return GF_E_CONFIG;
}

static int too_many_includes(const struct scan *s, const char *file)
{
	gf_errbuf_set(s->eb,
		      "%s:%d: @include \"%s\": more than %u inclusions in all (each one counts, "
		      "of the same file again too): the includes fan out (files that include "
		      "others several times, over several levels)",
		      s->name, s->line, file, GF_CFG_MAX_INCLUDES);
	return GF_E_CONFIG;
}

/* The file name of `@include "FILE"` at s->p into @p file (libconfig's escapes: \\ and \"). */
static void include_name(struct scan *s, char *file, size_t size)
{
	const char *q = s->p + 8; /* after "@include" */
	while (q < s->end && (*q == ' ' || *q == '\t'))
		q++;
	size_t n = 0;
	for (q++; q < s->end && *q != '"'; q++) {
		if (*q == '\\' && q + 1 < s->end)
			q++;
		if (*q == '\n')
			s->line++;
		if (n + 1 < size)
			file[n++] = *q;
	}
	file[n] = '\0';
	s->p = q < s->end ? q + 1 : q;
}

/* A file seen before, by the path it resolved to; -1 when new. */
static int64_t find_included(const struct gf_cfg_includes *inc, const char *path)
{
	for (uint32_t i = 0; i < inc->n; i++)
		if (strcmp(inc->f[i].path, path) == 0)
			return i;
	return -1;
}

/* Count a file seen before again, as libconfig reads it again (the whole subtree). */
static int count_again(struct scan *s, const char *file, const struct inc_file *f)
{
	if (f->busy) {
		gf_errbuf_set(s->eb, "%s:%d: @include \"%s\": includes itself (through %s): a cycle", s->name,
			      s->line, file, f->path);
		return GF_E_CONFIG;
	}
	s->tot->includes += f->sub.includes;
	s->tot->bytes += f->sub.bytes;
	s->tot->values += f->sub.values;
	if (s->tot->includes > GF_CFG_MAX_INCLUDES)
		return too_many_includes(s, file);
	return s->tot->bytes > GF_CFG_MAX_TREE_BYTES ? tree_too_big(s, file) : 0;
}

/* @include "FILE" at the start of a line (libconfig's rule): check, scan and rewrite it. */
static int scan_include(struct scan *s)
{
	const char *start = s->p;
	int line0 = s->line;
	const char *q = s->p + 8;
	while (q < s->end && (*q == ' ' || *q == '\t'))
		q++;
	if (q >= s->end || *q != '"')
		return 0; /* libconfig's parser reports the syntax error */
	char file[4096];
	include_name(s, file, sizeof(file));
	if (s->depth + 1 >= MAX_DEPTH) {
		gf_errbuf_set(s->eb, "%s:%d: @include \"%s\": includes nested more than %d deep", s->name,
			      line0, file, MAX_DEPTH - 1);
		return GF_E_CONFIG;
	}
	if (++s->tot->includes > GF_CFG_MAX_INCLUDES)
		return too_many_includes(s, file);
	char *path =
		file[0] == '/' || !s->include_dir ? strdup(file) : gf_cfg_join_path(s->include_dir, file);
	if (!path)
		return GF_E_NOMEM;
	int64_t at = find_included(s->inc, path);
	uint32_t idx = (uint32_t)at;
	int r = at >= 0 ? count_again(s, file, &s->inc->f[at]) : scan_file(s, file, path, &idx);
	free(path);
	if (r)
		return r;
	/* libconfig opens the checked text, not the path; the lines stay where they were */
	char dir[64];
	int n = snprintf(dir, sizeof(dir), "@include \"/proc/self/fd/%d\"", s->inc->f[idx].fd);
	out_add(s->out, s->copied, (size_t)(start - s->copied));
	out_add(s->out, dir, (size_t)n);
	for (int i = line0; i < s->line; i++)
		out_add(s->out, "\n", 1);
	s->copied = s->p;
	return s->out->failed ? GF_E_NOMEM : 0;
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

static int scan_text(const struct scan *parent, const char *text, size_t len, const char *name,
		     struct outbuf *out)
{
	struct scan s = *parent;
	s.p = s.copied = text;
	s.end = text + len;
	s.name = name;
	s.line = 1;
	s.out = out;
	s.tot->bytes += len;
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
			s.tot->values++;
		} else
			s.p++;
		bol = 0;
	}
	out_add(out, s.copied, (size_t)(s.end - s.copied));
	return r ? r : out->failed ? GF_E_NOMEM : 0;
}

/* The checked text in a memfd (close-on-exec) that libconfig opens by its /proc path. */
static int to_memfd(const struct outbuf *o, int *fd, struct gf_errbuf *eb, const char *path)
{
	*fd = memfd_create("gpufir-include", MFD_CLOEXEC);
	size_t done = 0;
	while (*fd >= 0 && done < o->len) {
		ssize_t n = write(*fd, o->p + done, o->len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (*fd >= 0 && done == o->len)
		return 0;
	gf_errbuf_set(eb, "%s: cannot hold the @include file's text: %s", path, strerror(errno));
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return GF_E_IO;
}

/* Whether @p path (or, with @p fd >= 0, the file that descriptor has open) is under the roots. */
static int confined(const struct scan *s, const char *path, int fd, struct gf_errbuf *why)
{
	char link[64], real[PATH_MAX];
	char *r = NULL;
	if (fd >= 0) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, real, sizeof(real) - 1);
		if (n > 0) {
			real[n] = '\0';
			r = real;
		}
	} else {
		r = realpath(path, real);
	}
	if (r && gf_cfg_roots_allow(s->roots, r))
		return 1;
	gf_errbuf_set(why,
		      "%s: outside the config's folder and the folders the config file on disk reads "
		      "from: only the owner may include it (Authenticate with the control key)",
		      path);
	return 0;
}

/* Read an @include file. A guest's is resolved before it is opened (nothing outside is even
 * opened) and again on the open descriptor (a link swapped in between leads nowhere). */
static int read_include(const struct scan *s, const char *path, char **buf, size_t *len,
			struct gf_errbuf *why)
{
	if (!s->roots)
		return gf_file_read_all(path, "@include file", GF_CFG_MAX_BYTES, buf, len, why);
	if (!confined(s, path, -1, why))
		return GF_E_IO;
	int fd = gf_file_open_read(path, "@include file", 0, why);
	if (fd < 0)
		return fd;
	int r = confined(s, path, fd, why)
			? gf_file_read_fd(fd, path, "@include file", GF_CFG_MAX_BYTES, buf, len, why)
			: GF_E_IO;
	close(fd);
	return r;
}

/* A file not seen before: read it (regular files only), scan it, and keep its text for libconfig. */
static int scan_file(struct scan *s, const char *file, const char *path, uint32_t *idx)
{
	struct gf_cfg_includes *inc = s->inc;
	if (inc->n == inc->cap) {
		uint32_t cap = inc->cap ? inc->cap * 2 : 8;
		struct inc_file *f = realloc(inc->f, cap * sizeof(*f));
		if (!f)
			return GF_E_NOMEM;
		inc->f = f;
		inc->cap = cap;
	}
	char *buf = NULL;
	size_t blen = 0;
	struct gf_errbuf why;
	int r = read_include(s, path, &buf, &blen, &why);
	if (r == GF_E_IO) {
		gf_errbuf_set(s->eb, "%s:%d: @include: %s", s->name, s->line, why.msg);
		return GF_E_CONFIG;
	}
	if (!r && s->tot->bytes + blen > GF_CFG_MAX_TREE_BYTES)
		r = tree_too_big(s, file);
	struct inc_file *f = &inc->f[inc->n];
	*f = (struct inc_file){.path = strdup(path), .fd = -1, .busy = 1};
	if (!r && !f->path)
		r = GF_E_NOMEM;
	if (r) {
		free(f->path);
		free(buf);
		return r;
	}
	*idx = inc->n++;
	struct scan_totals before = *s->tot;
	struct outbuf out = {0};
	struct scan child = *s;
	child.depth++;
	r = scan_text(&child, buf, blen, inc->f[*idx].path, &out);
	free(buf);
	f = &inc->f[*idx]; /* the table may have moved */
	if (!r)
		r = to_memfd(&out, &f->fd, s->eb, f->path);
	free(out.p);
	f->busy = 0;
	f->sub = (struct scan_totals){s->tot->values - before.values, s->tot->bytes - before.bytes,
				      s->tot->includes - before.includes};
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

void gf_cfg_includes_free(struct gf_cfg_includes *inc)
{
	if (!inc)
		return;
	for (uint32_t i = 0; i < inc->n; i++) {
		if (inc->f[i].fd >= 0)
			close(inc->f[i].fd);
		free(inc->f[i].path);
	}
	free(inc->f);
	free(inc);
}

const char *gf_cfg_includes_path(const struct gf_cfg_includes *inc, const char *name)
{
	static const char pre[] = "/proc/self/fd/";
	if (!inc || !name || strncmp(name, pre, sizeof(pre) - 1) != 0)
		return name;
	char *e;
	long fd = strtol(name + sizeof(pre) - 1, &e, 10);
	for (uint32_t i = 0; !*e && i < inc->n; i++)
		if (inc->f[i].fd == fd)
			return inc->f[i].path;
	return name;
}

int gf_cfg_prescan(const char *text, size_t len, const char *name, const char *include_dir,
		   const struct gf_cfg_roots *roots, char **checked, struct gf_cfg_includes **inc,
		   struct gf_errbuf *eb)
{
	struct scan_totals t = {0, 0, 0};
	struct outbuf out = {0};
	*checked = NULL;
	if (!(*inc = calloc(1, sizeof(**inc))))
		return GF_E_NOMEM;
	struct scan s = {.include_dir = include_dir, .eb = eb, .tot = &t, .inc = *inc, .roots = roots};
	int r = scan_text(&s, text, len, name, &out);
	if (!r)
		r = check_parse_memory(&t, name, eb);
	if (!r && !out.p && !(out.p = strdup("")))
		r = GF_E_NOMEM;
	if (r) {
		free(out.p);
		gf_cfg_includes_free(*inc);
		*inc = NULL;
		return r;
	}
	*checked = out.p;
	return 0;
}
