/*
 * Parametric EQ text: Equalizer APO's Preamp: and Filter: lines, as AutoEQ's
 * ParametricEQ.txt and REW's filter-settings export write them.
 *
 *   Preamp: -6.2 dB
 *   Filter 1: ON PK Fc 105 Hz Gain -3.2 dB Q 0.70
 *   Filter  2: ON  LSC      Fc   100.0 Hz  Gain  -3.0 dB  Q  0.707
 *
 * Blank lines and lines starting with '#' are skipped; in a REW file (first
 * line "Filter Settings file") so is the header before the first Filter line.
 * An OFF filter and REW's empty "None" slot are skipped. Any other line is an
 * error with its number: an EQ that silently lost a band would be wrong.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "peq.h"

#define MAX_LINE 1024
#define MAX_TOKENS 32

struct text_type {
	const char *token;
	enum gf_peq_type type;
	int needs_q; /* LPQ, HPQ: the variants that take Q */
};

static const struct text_type text_types[] = {
	{"PK", GF_PEQ_PEAKING, 0},   {"PEQ", GF_PEQ_PEAKING, 0},  {"LS", GF_PEQ_LOWSHELF, 0},
	{"LSC", GF_PEQ_LOWSHELF, 0}, {"HS", GF_PEQ_HIGHSHELF, 0}, {"HSC", GF_PEQ_HIGHSHELF, 0},
	{"LP", GF_PEQ_LOWPASS, 0},   {"LPQ", GF_PEQ_LOWPASS, 1},  {"HP", GF_PEQ_HIGHPASS, 0},
	{"HPQ", GF_PEQ_HIGHPASS, 1}, {"BP", GF_PEQ_BANDPASS, 0},  {"NO", GF_PEQ_NOTCH, 0},
	{"AP", GF_PEQ_ALLPASS, 0},
};

struct line_ctx {
	const char *name;
	int line;
	struct gf_errbuf *eb;
};

static int bad(const struct line_ctx *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(const struct line_ctx *L, const char *fmt, ...)
{
	char why[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	gf_errbuf_set(L->eb, "%s:%d: %s", L->name, L->line, why);
	return GF_E_FORMAT;
}

/* Split on blanks, in place. @return the count, or -1 when over MAX_TOKENS */
static int tokenize(char *s, char **tok)
{
	int n = 0;
	for (char *save = NULL, *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == MAX_TOKENS)
			return -1;
		tok[n++] = t;
	}
	return n;
}

static int number(const struct line_ctx *L, const char *key, const char *s, double *v)
{
	char *end;
	if (!s)
		return bad(L, "%s: a number is missing", key);
	*v = strtod(s, &end);
	if (end == s || *end || !isfinite(*v))
		return bad(L, "\"%s\" is not a number", s);
	return 0;
}

/* The message of gf_peq_band_finish, with the file's names for the settings. */
static int band_error(const struct line_ctx *L, const char *msg)
{
	static const char *const names[][2] = {
		{"freq_hz:", "Fc:"}, {"gain_db:", "Gain:"}, {"q:", "Q:"}, {"bandwidth_oct:", "BW Oct:"}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t k = strlen(names[i][0]);
		if (strncmp(msg, names[i][0], k) == 0) {
			gf_errbuf_set(L->eb, "%s:%d: %s%s", L->name, L->line, names[i][1], msg + k);
			return GF_E_FORMAT;
		}
	}
	gf_errbuf_set(L->eb, "%s:%d: %s", L->name, L->line, msg);
	return GF_E_FORMAT;
}

enum param { P_FC, P_GAIN, P_Q, P_BW_OCT, P_COUNT };
static const char *const param_names[P_COUNT] = {"Fc", "Gain", "Q", "BW Oct"};

/* The setting at tok[*i] ("BW Oct" is two words); *i moves past it. @return P_COUNT if unknown */
static enum param param_at(char **tok, int n, int *i)
{
	const char *k = tok[(*i)++];
	if (strcmp(k, "BW") == 0 && *i < n && strcmp(tok[*i], "Oct") == 0) {
		(*i)++;
		return P_BW_OCT;
	}
	for (int p = 0; p < P_BW_OCT; p++)
		if (strcmp(k, param_names[p]) == 0)
			return (enum param)p;
	return P_COUNT;
}

/* "Fc 105 Hz Gain -3.2 dB Q 0.70" (units optional), each at most once. */
static int filter_params(const struct line_ctx *L, char **tok, int n, struct gf_peq_band *b, int *has_q)
{
	int seen[P_COUNT] = {0};
	for (int i = 0; i < n;) {
		const char *word = tok[i];
		enum param k = param_at(tok, n, &i);
		double x = 0.0;
		int r;
		if (k == P_COUNT)
			return bad(L, "unknown setting \"%s\" (Fc, Gain, Q, BW Oct)", word);
		if (seen[k]++)
			return bad(L, "%s is given twice", param_names[k]);
		if ((r = number(L, param_names[k], i < n ? tok[i] : NULL, &x)))
			return r;
		i++;
		const char *unit = k == P_FC ? "Hz" : k == P_GAIN ? "dB" : NULL;
		if (unit && i < n && strcasecmp(tok[i], unit) == 0)
			i++;
		if ((k == P_Q || k == P_BW_OCT) && !(x > 0.0))
			return bad(L, "%s: must be above 0", param_names[k]);
		if (k == P_FC)
			b->freq_hz = x;
		else if (k == P_GAIN)
			b->gain_db = x, b->has_gain = 1;
		else if (k == P_Q)
			b->q = x, *has_q = 1;
		else
			b->bw_oct = x;
	}
	return 0;
}

/* After "Filter N:": ON|OFF TYPE params, appended to @p p unless OFF or an empty slot. */
static int parse_filter(const struct line_ctx *L, char *rest, struct gf_peq *p)
{
	char *tok[MAX_TOKENS];
	int n = tokenize(rest, tok);
	if (n < 0)
		return bad(L, "%s", "too many words for a Filter line");
	if (n < 1 || (strcasecmp(tok[0], "ON") && strcasecmp(tok[0], "OFF")))
		return bad(L, "Filter: expected ON or OFF, got \"%s\"", n ? tok[0] : "");
	if (strcasecmp(tok[0], "OFF") == 0 || (n == 2 && strcasecmp(tok[1], "None") == 0))
		return 0;
	if (n < 2)
		return bad(L, "%s",
			   "Filter: the filter type is missing (PK, LSC, HSC, LP, HP, BP, NO, AP, ...)");
	const struct text_type *t = NULL;
	for (size_t i = 0; i < sizeof(text_types) / sizeof(text_types[0]); i++)
		if (strcmp(tok[1], text_types[i].token) == 0)
			t = &text_types[i];
	if (!t)
		return bad(L,
			   "unknown filter type \"%s\" (PK, PEQ, LS, LSC, HS, HSC, LP, LPQ, HP, HPQ, BP, NO, "
			   "AP)",
			   tok[1]);
	struct gf_peq_band b = {.type = t->type, .line = L->line};
	int has_q = 0, r = filter_params(L, tok + 2, n - 2, &b, &has_q);
	if (r)
		return r;
	if (t->needs_q && !has_q)
		return bad(L, "Q: a %s filter needs Q", t->token);
	struct gf_errbuf why = {{0}};
	if (gf_peq_band_finish(&b, &why))
		return band_error(L, why.msg);
	r = gf_peq_add(p, &b, &why);
	if (r == GF_E_CONFIG)
		return bad(L, "%s", why.msg);
	return r;
}

static int parse_preamp(const struct line_ctx *L, char *rest, struct gf_peq *p)
{
	char *tok[MAX_TOKENS];
	int n = tokenize(rest, tok);
	double x = 0.0;
	int r;
	if (n < 1 || n > 2 || (n == 2 && strcasecmp(tok[1], "dB") != 0))
		return bad(L, "%s", "Preamp: expected a number of dB, e.g. \"Preamp: -6.2 dB\"");
	if ((r = number(L, "Preamp", tok[0], &x)))
		return r;
	if (!(x >= GF_PEQ_GAIN_DB_MIN && x <= GF_PEQ_GAIN_DB_MAX))
		return bad(L, "%s: must be -60..30 dB", "Preamp");
	/* The lines add (and to the config's preamp_db): the sum is the gain applied. */
	double sum = p->preamp_db + x;
	if (!(sum >= GF_PEQ_GAIN_DB_MIN && sum <= GF_PEQ_GAIN_DB_MAX))
		return bad(L,
			   "Preamp: the preamps add up to %g dB here (%g dB before this line); the sum must "
			   "be -60..30 dB",
			   sum, p->preamp_db);
	p->preamp_db = sum;
	return 0;
}

/* "Filter:", "Filter 1:", "Filter  12:" -> what follows the colon, else NULL. */
static char *filter_rest(char *s)
{
	if (strncmp(s, "Filter", 6) != 0)
		return NULL;
	s += 6;
	while (*s == ' ' || *s == '\t')
		s++;
	while (isdigit((unsigned char)*s))
		s++;
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == ':' ? s + 1 : NULL;
}

static int parse_line(const struct line_ctx *L, char *s, int *rew_header, struct gf_peq *p)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t len = strlen(s);
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		s[--len] = '\0';
	if (!*s || *s == '#')
		return 0;
	if (L->line == 1 && strcmp(s, "Filter Settings file") == 0) {
		*rew_header = 1;
		return 0;
	}
	char *rest = filter_rest(s);
	if (rest) {
		*rew_header = 0;
		return parse_filter(L, rest, p);
	}
	if (*rew_header)
		return 0;
	if (strncmp(s, "Preamp:", 7) == 0)
		return parse_preamp(L, s + 7, p);
	return bad(L,
		   "\"%.60s\" is not a Preamp: or Filter: line (other Equalizer APO commands, such as "
		   "Channel: or Include:, are not applied)",
		   s);
}

int gf_peq_parse_text(const char *text, size_t len, const char *name, struct gf_peq *p, struct gf_errbuf *eb)
{
	struct line_ctx L = {name, 0, eb};
	char buf[MAX_LINE + 1];
	size_t i = 0;
	int rew_header = 0;
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) /* UTF-8 byte-order mark */
		i = 3;
	while (i < len) {
		L.line++;
		size_t end = i;
		while (end < len && text[end] != '\n')
			end++;
		if (end - i > MAX_LINE)
			return bad(&L, "a line longer than %d characters", MAX_LINE);
		if (memchr(text + i, '\0', end - i))
			return bad(&L, "%s", "a NUL byte: this is not a text file");
		memcpy(buf, text + i, end - i);
		buf[end - i] = '\0';
		int r = parse_line(&L, buf, &rew_header, p);
		if (r)
			return r;
		i = end + 1;
	}
	return 0;
}
