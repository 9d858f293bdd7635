/*
 * A batch's job list: inputs from -i and --batch LIST, outputs named in the
 * list or OUTDIR/<input's file name>, a deterministic shard of the list, and
 * the checks that make a batch safe to start (no two jobs writing one file,
 * no job writing another's input).
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "offline.h"
#include "temp_file.h"

void gf_offline_jobs_free(struct gf_offline_jobs *j)
{
	for (size_t i = 0; i < j->n; i++) {
		free(j->v[i].input);
		free(j->v[i].output);
	}
	free(j->v);
	memset(j, 0, sizeof(*j));
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int gf_offline_jobs_add(struct gf_offline_jobs *j, const char *input, const char *output, const char *outdir,
			struct gf_errbuf *eb)
{
	if (!input[0] || input[strlen(input) - 1] == '/') {
		gf_errbuf_set(eb, "'%s' is not a file name", input);
		return GF_E_INVAL;
	}
	if (!output && !outdir) {
		gf_errbuf_set(eb, "%s: no output named and no -o DIR/ to put it in", input);
		return GF_E_INVAL;
	}
	if (j->n == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 64;
		struct gf_offline_job *v = realloc(j->v, cap * sizeof(*v));
		if (!v)
			return GF_E_NOMEM;
		j->v = v;
		j->cap = cap;
	}
	struct gf_offline_job *job = &j->v[j->n];
	job->input = strdup(input);
	job->output = NULL;
	if (output) {
		job->output = strdup(output);
	} else {
		size_t dl = strlen(outdir);
		const char *sep = dl && outdir[dl - 1] == '/' ? "" : "/";
		if (asprintf(&job->output, "%s%s%s", outdir, sep, base_name(input)) < 0)
			job->output = NULL;
	}
	if (!job->input || !job->output) {
		free(job->input);
		free(job->output);
		return GF_E_NOMEM;
	}
	j->n++;
	return 0;
}

/* The longest record: two names of PATH_MAX and a TAB fit many times over. An
 * endless line (binary data, a stream with no newline) is an error, not memory. */
#define LIST_RECORD_MAX 65536

/* What a list may hold, in names and per-job bookkeeping (about 80 bytes a job of short names): an
 * endless list (`yes x.wav |`) is refused here, not when memory runs out. */
#define LIST_HELD_MAX ((size_t)256 << 20)
#define JOB_OVERHEAD (sizeof(struct gf_offline_job) + 64) /* two allocations' headers and rounding */

struct list_reader {
	FILE *f;
	const char *name; /* for messages: the list's path or "standard input" */
	int nul;	  /* records end in NUL bytes (-0), else in newlines */
	char *buf;
	size_t len, cap;
	size_t record; /* the record's number, from 1 */
	size_t held;   /* bytes the jobs read so far hold */
};

static int record_error(struct list_reader *r, const char *why, struct gf_errbuf *eb)
{
	gf_errbuf_set(eb, "%s:%zu: %s", r->name, r->record, why);
	return GF_E_INVAL;
}

/* The next record, without its terminator, into r->buf: 1, 0 at the end, or an error. */
static int next_record(struct list_reader *r, struct gf_errbuf *eb)
{
	int c, end = r->nul ? '\0' : '\n';
	r->len = 0;
	r->record++;
	errno = 0;
	while ((c = getc_unlocked(r->f)) != EOF && c != end) {
		if (c == '\0')
			return record_error(r,
					    "a NUL byte in the line: a list of NUL-terminated names (find "
					    "-print0) needs -0/--null",
					    eb);
		if (r->len + 1 >= LIST_RECORD_MAX)
			return record_error(
				r,
				"longer than 64 KiB: not a list (a binary file, or a NUL-separated "
				"list without -0/--null?)",
				eb);
		if (r->len + 1 >= r->cap) {
			size_t cap = r->cap ? 2 * r->cap : 256;
			char *b = realloc(r->buf, cap);
			if (!b)
				return GF_E_NOMEM;
			r->buf = b;
			r->cap = cap;
		}
		r->buf[r->len++] = (char)c;
	}
	if (c == EOF && ferror(r->f)) {
		gf_errbuf_set(eb, "cannot read the batch list %s (at record %zu): %s", r->name, r->record,
			      strerror(errno ? errno : EIO));
		return GF_E_IO;
	}
	if (c == EOF && r->len == 0)
		return 0;
	if (r->buf)
		r->buf[r->len] = '\0';
	return 1;
}

/*
 * One record: "INPUT" or "INPUT<TAB>OUTPUT". Newline-separated: blank lines
 * and '#' comments are skipped, a CR before the newline is dropped. With -0
 * the record is the names' bytes as they are (a name may hold a newline or
 * start with '#'); only empty records are skipped.
 */
static int add_record(struct gf_offline_jobs *j, struct list_reader *r, const char *outdir,
		      struct gf_errbuf *eb)
{
	char *line = r->buf;
	size_t n = r->len;
	while (!r->nul && n && line[n - 1] == '\r')
		line[--n] = '\0';
	if (n == 0 || (!r->nul && line[0] == '#'))
		return 0;
	char *tab = strchr(line, '\t');
	if (tab)
		*tab = '\0';
	const char *out = tab ? tab + 1 : NULL;
	if (out && (!*out || strchr(out, '\t')))
		return record_error(r, "expected INPUT or INPUT<TAB>OUTPUT", eb);
	if (!out && !outdir) {
		gf_errbuf_set(eb,
			      "%s:%zu: no output for '%s': give -o DIR/, or INPUT<TAB>OUTPUT (a TAB "
			      "separates them; spaces belong to the names)",
			      r->name, r->record, line);
		return GF_E_INVAL;
	}
	struct gf_errbuf leb = {{0}};
	int err = gf_offline_jobs_add(j, line, out, outdir, &leb);
	if (err == GF_E_INVAL)
		record_error(r, leb.msg, eb);
	if (err)
		return err;
	const struct gf_offline_job *job = &j->v[j->n - 1];
	r->held += strlen(job->input) + strlen(job->output) + JOB_OVERHEAD;
	if (r->held > LIST_HELD_MAX) {
		gf_errbuf_set(eb,
			      "%s:%zu: the list holds more than %zu MiB of names (%zu jobs so far): split it "
			      "into several lists (an endless list?)",
			      r->name, r->record, LIST_HELD_MAX >> 20, j->n);
		return GF_E_INVAL;
	}
	return 0;
}

int gf_offline_jobs_read_list(struct gf_offline_jobs *j, const char *path, const char *outdir, int nul,
			      struct gf_errbuf *eb)
{
	int is_stdin = strcmp(path, "-") == 0;
	struct list_reader r = {.name = is_stdin ? "standard input" : path, .nul = nul};
	r.f = is_stdin ? stdin : fopen(path, "r");
	if (!r.f) {
		gf_errbuf_set(eb, "cannot read the batch list %s: %s", path, strerror(errno));
		return GF_E_IO;
	}
	int got;
	while ((got = next_record(&r, eb)) == 1 && (got = add_record(j, &r, outdir, eb)) == 0)
		;
	if (got == GF_E_NOMEM)
		gf_errbuf_set(eb, "cannot read the batch list %s: out of memory", r.name);
	free(r.buf);
	if (!is_stdin)
		fclose(r.f);
	return got < 0 ? got : 0;
}

int gf_offline_shard_parse(const char *s, uint32_t *k, uint32_t *n)
{
	char *end;
	errno = 0;
	unsigned long a = strtoul(s, &end, 10);
	if (errno || end == s || *end != '/' || s[0] == '-')
		return GF_E_INVAL;
	const char *t = end + 1;
	unsigned long b = strtoul(t, &end, 10);
	if (errno || end == t || *end || t[0] == '-' || b == 0 || b > UINT32_MAX || a >= b)
		return GF_E_INVAL;
	*k = (uint32_t)a;
	*n = (uint32_t)b;
	return 0;
}

/*
 * Keep jobs K, K+N, K+2N, ...: every job lands in exactly one shard whatever
 * N, neighbours (often similar files) spread over shards, and the list's
 * order is all it takes, so machines that read the same list agree.
 */
void gf_offline_jobs_shard(struct gf_offline_jobs *j, uint32_t k, uint32_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < j->n; i++) {
		if (i % n == k) {
			j->v[w++] = j->v[i];
		} else {
			free(j->v[i].input);
			free(j->v[i].output);
		}
	}
	j->n = w;
}

/*
 * A job's file by identity, not by spelling: "out/x.wav", "./out/x.wav" and
 * "link-to-out/x.wav" are one name in one folder. An output replaces the
 * name in its folder (a rename), so names are compared by the folder's
 * device and inode and the last component; an existing file is also
 * compared by its own device and inode, so that an output that is a link to
 * an input is refused as a single run refuses it.
 */
struct named {
	const char *s;	  /* as the job spells it */
	const char *name; /* its last component (in s) */
	dev_t ddev, dev;
	ino_t dino, ino;
	int dir_ok; /* the folder exists: compared by identity, else by spelling */
	int exists; /* the file exists: dev, ino */
	size_t job;
	int is_output;
};

static int name_identity(struct named *n, const char *path, size_t job, int is_output)
{
	char *dir;
	struct stat st;
	*n = (struct named){.s = path, .job = job, .is_output = is_output};
	if (gf_path_split(path, &dir, &n->name))
		return GF_E_NOMEM;
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
		n->dir_ok = 1;
		n->ddev = st.st_dev;
		n->dino = st.st_ino;
	}
	free(dir);
	if (stat(path, &st) == 0) {
		n->exists = 1;
		n->dev = st.st_dev;
		n->ino = st.st_ino;
	}
	return 0;
}

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

/* The same name in the same folder (by spelling where the folder does not exist). */
static int entry_key(const struct named *x, const struct named *y)
{
	if (x->dir_ok != y->dir_ok)
		return CMP(x->dir_ok, y->dir_ok);
	if (!x->dir_ok)
		return strcmp(x->s, y->s);
	if (x->ddev != y->ddev)
		return CMP(x->ddev, y->ddev);
	if (x->dino != y->dino)
		return CMP(x->dino, y->dino);
	return strcmp(x->name, y->name);
}

/* The same existing file (device and inode); files that do not exist sort first. */
static int file_key(const struct named *x, const struct named *y)
{
	if (x->exists != y->exists)
		return CMP(x->exists, y->exists);
	if (!x->exists)
		return 0;
	return x->dev != y->dev ? CMP(x->dev, y->dev) : CMP(x->ino, y->ino);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = entry_key(x, y);
	return c ? c : CMP(x->job, y->job);
}

static int cmp_file(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = file_key(x, y);
	return c ? c : CMP(x->job, y->job);
}

/*
 * Neighbours after sorting by @p key: two outputs alike, or an output that is
 * some job's input. A run of equal keys holding an output and anything else
 * always has such a pair of neighbours. One input listed twice is harmless.
 */
static int find_clash(const struct gf_offline_jobs *j, struct named *v, size_t n,
		      int (*key)(const struct named *, const struct named *), struct gf_errbuf *eb)
{
	for (size_t i = 1; i < n; i++) {
		const struct named *a = &v[i - 1], *b = &v[i];
		if (key(a, b) != 0 || (!a->is_output && !b->is_output) || (key == file_key && !a->exists))
			continue;
		if (key == file_key && a->is_output && b->is_output)
			continue; /* two links to one file: each rename replaces its own name */
		if (a->is_output && b->is_output) {
			gf_errbuf_set(eb, "%s%s%s would be written twice (for %s and %s): name the outputs",
				      a->s, strcmp(a->s, b->s) ? " and " : "", strcmp(a->s, b->s) ? b->s : "",
				      j->v[a->job].input, j->v[b->job].input);
		} else {
			const struct named *out = a->is_output ? a : b, *in = a->is_output ? b : a;
			gf_errbuf_set(eb,
				      "%s, the output of %s, is the input %s%s: gpufir never overwrites an "
				      "input; choose another output (or -o DIR/)",
				      out->s, j->v[out->job].input, in->s,
				      key == file_key ? " (the same file under another name or a link)" : "");
		}
		return GF_E_INVAL;
	}
	return 0;
}

/* Refuse two jobs writing one file, or a job writing another's input, however spelled. */
int gf_offline_jobs_check(const struct gf_offline_jobs *j, struct gf_errbuf *eb)
{
	struct named *v = malloc((2 * j->n + 1) * sizeof(*v));
	if (!v)
		return GF_E_NOMEM;
	int err = 0;
	for (size_t i = 0; i < j->n && !err; i++) {
		err = name_identity(&v[2 * i], j->v[i].input, i, 0);
		if (!err)
			err = name_identity(&v[2 * i + 1], j->v[i].output, i, 1);
	}
	if (!err) {
		qsort(v, 2 * j->n, sizeof(*v), cmp_entry);
		err = find_clash(j, v, 2 * j->n, entry_key, eb);
	}
	if (!err) {
		qsort(v, 2 * j->n, sizeof(*v), cmp_file);
		err = find_clash(j, v, 2 * j->n, file_key, eb);
	}
	free(v);
	return err;
}
