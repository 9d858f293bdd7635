/*
 * A batch's job list: inputs from -i and --batch LIST, outputs named in the
 * list or OUTDIR/<input's file name>, a deterministic shard of the list, and
 * the checks that make a batch safe to start (no two jobs writing one file,
 * no job writing another's input).
 */
#define _GNU_SOURCE /* asprintf, getline */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offline.h"

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

/* One list line: "INPUT" or "INPUT<TAB>OUTPUT"; blank lines and '#' comments are skipped. */
static int add_line(struct gf_offline_jobs *j, char *line, const char *name, size_t lineno,
		    const char *outdir, struct gf_errbuf *eb)
{
	size_t n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	if (n == 0 || line[0] == '#')
		return 0;
	char *tab = strchr(line, '\t');
	if (tab)
		*tab = '\0';
	const char *out = tab ? tab + 1 : NULL;
	if (out && (!*out || strchr(out, '\t'))) {
		gf_errbuf_set(eb, "%s:%zu: expected INPUT or INPUT<TAB>OUTPUT", name, lineno);
		return GF_E_INVAL;
	}
	if (!out && !outdir) {
		gf_errbuf_set(eb,
			      "%s:%zu: no output for '%s': give -o DIR/, or INPUT<TAB>OUTPUT (a TAB "
			      "separates them; spaces belong to the names)",
			      name, lineno, line);
		return GF_E_INVAL;
	}
	struct gf_errbuf leb = {{0}};
	int err = gf_offline_jobs_add(j, line, out, outdir, &leb);
	if (err == GF_E_INVAL)
		gf_errbuf_set(eb, "%s:%zu: %s", name, lineno, leb.msg);
	return err;
}

int gf_offline_jobs_read_list(struct gf_offline_jobs *j, const char *path, const char *outdir,
			      struct gf_errbuf *eb)
{
	int is_stdin = strcmp(path, "-") == 0;
	const char *name = is_stdin ? "standard input" : path;
	FILE *f = is_stdin ? stdin : fopen(path, "r");
	if (!f) {
		gf_errbuf_set(eb, "cannot read the batch list %s: %s", path, strerror(errno));
		return GF_E_IO;
	}
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	int err = 0;
	while (!err && getline(&line, &cap, f) >= 0)
		err = add_line(j, line, name, ++lineno, outdir, eb);
	if (!err && ferror(f)) {
		gf_errbuf_set(eb, "cannot read the batch list %s: %s", name, strerror(errno));
		err = GF_E_IO;
	}
	free(line);
	if (!is_stdin)
		fclose(f);
	return err;
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

struct named {
	const char *s;
	size_t job;
	int is_output;
};

static int cmp_named(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->s, y->s);
	if (c)
		return c;
	return x->job < y->job ? -1 : x->job > y->job;
}

/* By name, after sorting: two outputs alike, or an output that is some job's input. */
int gf_offline_jobs_check(const struct gf_offline_jobs *j, struct gf_errbuf *eb)
{
	if (j->n < 2)
		return 0;
	struct named *v = malloc(2 * j->n * sizeof(*v));
	if (!v)
		return GF_E_NOMEM;
	for (size_t i = 0; i < j->n; i++) {
		v[2 * i] = (struct named){j->v[i].input, i, 0};
		v[2 * i + 1] = (struct named){j->v[i].output, i, 1};
	}
	qsort(v, 2 * j->n, sizeof(*v), cmp_named);
	int err = 0;
	for (size_t i = 1; i < 2 * j->n && !err; i++) {
		const struct named *a = &v[i - 1], *b = &v[i];
		if (strcmp(a->s, b->s) != 0 || (!a->is_output && !b->is_output))
			continue; /* one input listed twice is harmless */
		if (a->is_output && b->is_output)
			gf_errbuf_set(eb, "%s would be written twice (for %s and %s): name the outputs", a->s,
				      j->v[a->job].input, j->v[b->job].input);
		else
			gf_errbuf_set(eb, "%s is both an input and the output of %s: choose another -o DIR/",
				      a->s, j->v[a->is_output ? a->job : b->job].input);
		err = GF_E_INVAL;
	}
	free(v);
	return err;
}
