/*
 * Configuration, loading: libconfig file -> validated struct gf_config.
 *
 * Load checks everything that does not depend on the sample rate (syntax,
 * types, ranges, names, that files exist) and keeps the line of every
 * setting, so config_build.c can report rate-dependent problems with the
 * same "FILE:LINE: SETTING: why" form.
 */
#include "config_parse.h"

#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config_priv.h"
#include "log.h"
#include "safe_file.h"

static const char *const route_keys[] = {"channel", "chain", "gain_db", "delay_ms", "invert"};

static int parse_route(const struct gf_cfg_loader *L, const config_setting_t *g, unsigned idx,
		       struct gf_config_route *r)
{
	char prefix[64], name[96];
	snprintf(prefix, sizeof(prefix), "routes[%u].", idx);
	snprintf(r->name, sizeof(r->name), "routes[%u]", idx);
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return gf_cfg_fail_at(L, g, "routes", "entry %u must be a group { channel = 0; ... }, not %s",
				      idx, gf_cfg_type_name(g));
	r->line = gf_cfg_line_of(g);
	if (!(r->src = strdup(gf_cfg_src_of(L, g))))
		return GF_E_NOMEM;
	long long ch = -1;
	int e = gf_cfg_get_int(L, g, prefix, "channel", 0, MAX_CHANNELS - 1, &ch);
	if (e < 0)
		return e;
	if (e == 0)
		return gf_cfg_missing(L, g, prefix, "channel", "the 0-based channel this route filters");
	r->channel = r->out = (uint32_t)ch;
	r->channel_line = gf_cfg_line_of(config_setting_get_member(g, "channel"));
	const config_setting_t *ca = config_setting_get_member(g, "chain");
	if (ca) {
		gf_cfg_setting(name, sizeof(name), prefix, "chain");
		r->has_chain = 1;
		r->chain_line = gf_cfg_line_of(ca);
		if ((e = gf_cfg_parse_names(L, ca, name, &r->chain, &r->n_chain)) < 0)
			return e;
	}
	if ((e = gf_cfg_get_num(L, g, prefix, "gain_db", GAIN_DB_MIN, GAIN_DB_MAX, &r->gain_db)) < 0 ||
	    (e = gf_cfg_get_num(L, g, prefix, "delay_ms", 0.0, 10000.0, &r->delay_ms)) < 0 ||
	    (e = gf_cfg_get_bool(L, g, prefix, "invert", &r->invert)) < 0)
		return e;
	gf_cfg_warn_unknown(L, g, prefix, route_keys, sizeof(route_keys) / sizeof(route_keys[0]),
			    "unknown setting");
	return 0;
}

static int parse_routes(const struct gf_cfg_loader *L, const config_setting_t *root)
{
	struct gf_config *c = L->c;
	const config_setting_t *rl = config_setting_get_member(root, "routes");
	if (!rl)
		return 0;
	int t = config_setting_type(rl);
	if (t != CONFIG_TYPE_LIST)
		return gf_cfg_fail_at(L, rl, "routes", "must be a list ( {...}, ... ), not %s",
				      gf_cfg_type_name(rl));
	int n = config_setting_length(rl);
	if (n == 0)
		return 0;
	if (!(c->routes = calloc((size_t)n, sizeof(*c->routes))))
		return GF_E_NOMEM;
	for (int i = 0; i < n; i++) {
		const config_setting_t *g = config_setting_get_elem(rl, (unsigned)i);
		int e = parse_route(L, g, (unsigned)i, &c->routes[i]);
		c->n_routes = (uint32_t)i + 1;
		if (e < 0)
			return e;
		for (int j = 0; j < i; j++) {
			if (c->routes[j].channel == c->routes[i].channel) {
				char name[64];
				snprintf(name, sizeof(name), "routes[%d].channel", i);
				return gf_cfg_fail_at(L, config_setting_get_member(g, "channel"), name,
						      "channel %u already has a route (line %d)",
						      c->routes[i].channel, c->routes[j].line);
			}
		}
	}
	return 0;
}

/* ---- top level ---------------------------------------------------------- */

static const char *const top_keys[] = {
	"sample_rate",
	"block_frames",
	"backend",
	"algo",
	"gpu",
	"gpu_path",
	"crossfade_ms",
	"max_taps",
	"log_level",
	"status_socket",
	"latency_slack",
	"input",
	"output",
	"filters",
	"chain",
	"routes",
	"phase",
	"gpu_deadline_ms",
	"mixer",
	"volume_db",
	"volume_limit_db",
	"state_file",
	"control_socket",
	"control_port",
	"control_address",
	"control_allowed_origins",
	"control_key_file",
};
static const char *const endpoint_keys[] = {"device", "host_api", "channels", "file"};

static int parse_endpoint(const struct gf_cfg_loader *L, const config_setting_t *root, const char *key,
			  struct gf_audio_endpoint *ep, int is_output)
{
	const config_setting_t *g = config_setting_get_member(root, key);
	if (!g)
		return 0;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return gf_cfg_fail_at(L, g, key, "must be a group { device = \"...\"; }, not %s",
				      gf_cfg_type_name(g));
	char prefix[32];
	snprintf(prefix, sizeof(prefix), "%s.", key);
	const config_setting_t *dev = config_setting_get_member(g, "device");
	int r;
	if (dev &&
	    (config_setting_type(dev) == CONFIG_TYPE_INT || config_setting_type(dev) == CONFIG_TYPE_INT64)) {
		char num[32];
		snprintf(num, sizeof(num), "%lld", (long long)config_setting_get_int64(dev));
		if (!(ep->device = strdup(num)))
			return GF_E_NOMEM;
	} else if ((r = gf_cfg_get_str(L, g, prefix, "device", &ep->device)) < 0) {
		return r;
	}
	long long ch = 0;
	if ((r = gf_cfg_get_str(L, g, prefix, "host_api", &ep->host_api)) < 0 ||
	    (r = gf_cfg_get_int(L, g, prefix, "channels", 0, MAX_CHANNELS, &ch)) < 0)
		return r;
	ep->channels = (uint32_t)ch;
	if (is_output) {
		char *rel = NULL;
		if ((r = gf_cfg_get_str(L, g, prefix, "file", &rel)) < 0)
			return r;
		if (rel) {
			ep->file = gf_cfg_join_path(L->base_dir, rel);
			free(rel);
			if (!ep->file)
				return GF_E_NOMEM;
		}
	}
	gf_cfg_warn_unknown(L, g, prefix, endpoint_keys, is_output ? 4 : 3, "unknown setting");
	return 0;
}

static int parse_enum(const struct gf_cfg_loader *L, const config_setting_t *root, const char *key,
		      const char *const *names, int n, int *out)
{
	char *s = NULL;
	int r = gf_cfg_get_str(L, root, "", key, &s);
	if (r <= 0)
		return r;
	for (int i = 0; i < n; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			free(s);
			return 1;
		}
	}
	char list[128] = "";
	for (int i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\"%s\"", i ? ", " : "",
			 names[i]);
	r = gf_cfg_fail_at(L, config_setting_get_member(root, key), key, "must be one of %s (got \"%s\")",
			   list, s);
	free(s);
	return r;
}

/* latency_slack: periods (0..16) or "auto" (grows after underruns). */
static int parse_slack(const struct gf_cfg_loader *L, const config_setting_t *root, struct gf_config *c)
{
	const config_setting_t *s = config_setting_get_member(root, "latency_slack");
	if (s && config_setting_type(s) == CONFIG_TYPE_STRING) {
		if (strcmp(config_setting_get_string(s), "auto") != 0)
			return gf_cfg_fail_at(L, s, "latency_slack", "must be \"auto\" or 0..16 (got \"%s\")",
					      config_setting_get_string(s));
		c->latency_slack_auto = 1;
		return 1;
	}
	long long v;
	int r = gf_cfg_get_int(L, root, "", "latency_slack", 0, 16, &v);
	if (r > 0) {
		c->latency_slack = (uint32_t)v;
		c->latency_slack_auto = 0;
	}
	return r;
}

static int parse_scalars(const struct gf_cfg_loader *L, const config_setting_t *root)
{
	struct gf_config *c = L->c;
	static const char *const backends[] = {"auto", "cpu", "cuda"}; /* enum gf_backend_kind order */
	static const char *const algos[] = {"auto", "direct", "fft"};  /* enum gf_algo order */
	static const char *const levels[] = {"error", "warning", "notice", "info", "debug"};
	static const char *const gpu_paths[] = GF_GPU_PATH_NAMES; /* enum gf_gpu_path order */
	long long v;
	int r, e = 0; /* set whenever r > 0; initialised for -O3, which cannot see that */
	if ((r = gf_cfg_get_int(L, root, "", "sample_rate", 8000, 384000, &v)) < 0)
		return r;
	if (r)
		c->sample_rate = (uint32_t)v;
	if ((r = gf_cfg_get_int(L, root, "", "block_frames", GF_LIVE_BLOCK_MIN, GF_LIVE_BLOCK_MAX, &v)) < 0)
		return r;
	if (r)
		c->block_frames = (uint32_t)v;
	if ((r = gf_cfg_get_int(L, root, "", "gpu", 0, 255, &v)) < 0)
		return r;
	if (r)
		c->gpu_index = (int)v;
	if ((r = gf_cfg_get_int(L, root, "", "max_taps", 0, GF_DESIGN_MAX_TAPS, &v)) < 0)
		return r;
	if (r) {
		c->max_taps = (uint32_t)v;
		c->priv->max_taps_line = gf_cfg_line_of(config_setting_get_member(root, "max_taps"));
	}
	if ((r = gf_cfg_get_num(L, root, "", "crossfade_ms", 0.0, 10000.0, &c->crossfade_ms)) < 0)
		return r;
	if ((r = gf_cfg_get_num(L, root, "", "gpu_deadline_ms", 0.0, 10000.0, &c->gpu_deadline_ms)) < 0)
		return r;
	if ((r = parse_slack(L, root, c)) < 0 || (r = gf_cfg_parse_volume(L, root)) < 0)
		return r;
	if ((r = parse_enum(L, root, "backend", backends, 3, &e)) < 0)
		return r;
	if (r)
		c->backend = (enum gf_backend_kind)e;
	if ((r = parse_enum(L, root, "algo", algos, 3, &e)) < 0)
		return r;
	if (r)
		c->algo = (enum gf_algo)e;
	if ((r = parse_enum(L, root, "gpu_path", gpu_paths, 3, &e)) < 0)
		return r;
	if (r)
		c->gpu_path = (enum gf_gpu_path)e;
	if ((r = parse_enum(L, root, "log_level", levels, 5, &e)) < 0)
		return r;
	if (r)
		gf_log_parse_level(levels[e], &c->log_level);
	if ((r = gf_cfg_get_str(L, root, "", "status_socket", &c->status_socket)) < 0 ||
	    (r = gf_cfg_parse_control(L, root)) < 0)
		return r;
	if ((r = gf_cfg_get_phase(L, root, "", 1, &e)) < 0)
		return r;
	if (r) {
		c->phase = (enum gf_phase)e;
		c->priv->phase_line = gf_cfg_line_of(config_setting_get_member(root, "phase"));
	}
	return 0;
}

static int parse_chain(const struct gf_cfg_loader *L, const config_setting_t *root)
{
	struct gf_config *c = L->c;
	const config_setting_t *a = config_setting_get_member(root, "chain");
	if (!a) {
		if (c->n_routes || config_setting_get_member(root, "mixer"))
			return 0; /* channels without a route, paths without a chain, pass through */
		return gf_cfg_fail_at(L, root, "chain",
				      "missing: name the filters to apply, e.g. chain = [\"%s\"];",
				      c->filters[0].name);
	}
	c->priv->chain_line = gf_cfg_line_of(a);
	return gf_cfg_parse_names(L, a, "chain", &c->chain, &c->n_chain);
}

/*
 * Every file libconfig read (the config and its @include files), for reload
 * watching: the paths the pre-scan resolved and read them from.
 */
static int collect_sources(const struct gf_cfg_loader *L, const config_setting_t *s)
{
	const char *f = gf_cfg_includes_path(L->inc, config_setting_source_file(s));
	int r = 0;
	if (f) {
		char *p = gf_cfg_join_path(L->base_dir, f);
		r = p ? gf_cfg_add_file(L->c, p) : GF_E_NOMEM;
		free(p);
	}
	int t = config_setting_type(s);
	if (t == CONFIG_TYPE_GROUP || t == CONFIG_TYPE_LIST) {
		int n = config_setting_length(s);
		for (int i = 0; i < n && !r; i++)
			r = collect_sources(L, config_setting_get_elem(s, (unsigned)i));
	}
	return r;
}

static void set_defaults(struct gf_config *c)
{
	c->block_frames = 256;
	c->backend = GF_BACKEND_AUTO;
	c->algo = GF_ALGO_AUTO;
	c->crossfade_ms = 20.0;
	c->latency_slack_auto = 1; /* docs/live.md, "Adaptive slack": the soaks that support it */
	c->latency_slack = 0;
	c->log_level = GF_LOG_INFO;
}

/*
 * output.file may not be a file the config reads (the config, an @include, a
 * filter file): a recording there would destroy what the next start needs.
 * Compared by name and by inode (links, "./" and "../" spellings).
 */
static int check_output_file(const struct gf_cfg_loader *L, const config_setting_t *root)
{
	const struct gf_config *c = L->c;
	if (!c->output.file)
		return 0;
	struct stat so;
	int have = stat(c->output.file, &so) == 0;
	for (uint32_t i = 0; i < c->n_files; i++) {
		struct stat sf;
		if (strcmp(c->files[i], c->output.file) == 0 ||
		    (have && stat(c->files[i], &sf) == 0 && sf.st_dev == so.st_dev && sf.st_ino == so.st_ino))
			return gf_cfg_fail_at(
				L,
				config_setting_get_member(config_setting_get_member(root, "output"), "file"),
				"output.file", "%s is a file the config reads (%s): record somewhere else",
				c->output.file, c->files[i]);
	}
	return 0;
}

static int load_root(struct gf_cfg_loader *L, const config_setting_t *root)
{
	int r;
	gf_cfg_warn_unknown(L, root, "", top_keys, sizeof(top_keys) / sizeof(top_keys[0]), "unknown setting");
	if ((r = parse_scalars(L, root)) < 0 || (r = parse_endpoint(L, root, "input", &L->c->input, 0)) < 0 ||
	    (r = parse_endpoint(L, root, "output", &L->c->output, 1)) < 0 ||
	    (r = gf_cfg_parse_filters(L, root)) < 0 || (r = parse_routes(L, root)) < 0 ||
	    (r = parse_chain(L, root)) < 0 || (r = gf_cfg_parse_mixer(L, root)) < 0)
		return r;
	if ((r = check_output_file(L, root)) < 0 || (r = gf_cfg_check_pipewire(L, root)) < 0)
		return r;
	for (uint32_t i = 0; i < L->c->n_filters; i++) {
		const struct gf_config_filter *f = &L->c->filters[i];
		if (!f->used)
			gf_warn("%s:%d: filters.%s: defined but not used in chain or routes", f->src, f->line,
				f->name);
	}
	return 0;
}

static int load_common(config_t *cfg, int parsed, struct gf_cfg_loader *L, struct gf_config **out)
{
	struct gf_config *c = L->c;
	int r = GF_E_NOMEM;
	if (!(c->priv = calloc(1, sizeof(*c->priv))) || !(c->priv->src = strdup(L->name)))
		goto fail;
	if (!parsed) {
		const char *ef = gf_cfg_includes_path(L->inc, config_error_file(cfg));
		gf_errbuf_set(L->eb, "%s:%d: %s", ef ? ef : L->name, config_error_line(cfg),
			      config_error_text(cfg) ? config_error_text(cfg) : "parse error");
		r = GF_E_CONFIG;
		goto fail;
	}
	if ((r = collect_sources(L, config_root_setting(cfg))) < 0 ||
	    (r = load_root(L, config_root_setting(cfg))) < 0)
		goto fail;
	config_destroy(cfg);
	*out = c;
	return 0;
fail:
	config_destroy(cfg);
	gf_config_free(c);
	return r;
}

int gf_config_load(const char *path, struct gf_config **out, struct gf_errbuf *eb)
{
	*out = NULL;
	if (!path)
		return GF_E_INVAL;
	/* Read through the safe open and hand libconfig the text: a directory or
	 * a FIFO never reaches libconfig's scanner (exit(2), or a blocked open). */
	char *text = NULL;
	size_t len = 0;
	int r = gf_file_read_all(path, "config", GF_CFG_MAX_BYTES, &text, &len, eb);
	if (r)
		return r;
	r = gf_config_load_text(path, text, out, eb);
	free(text);
	return r;
}

/*
 * The pre-scan, then libconfig on the text it checked: each @include there
 * names the memfd of a file the pre-scan read, and libconfig gets no include
 * directory, so it opens nothing the scan did not check. *parsed is
 * libconfig's verdict (its error is in @p cfg); @return < 0 when the
 * pre-scan refused (cfg then untouched), else 0 with cfg to destroy.
 */
static int read_checked(config_t *cfg, const char *text, const char *name, const char *dir,
			const struct gf_cfg_roots *roots, struct gf_cfg_includes **inc, int *parsed,
			struct gf_errbuf *eb)
{
	char *checked = NULL;
	int r = gf_cfg_prescan(text, strlen(text), name, dir, roots, &checked, inc, eb);
	if (r < 0)
		return r;
	config_init(cfg);
	*parsed = config_read_string(cfg, checked) == CONFIG_TRUE;
	free(checked);
	return 0;
}

int gf_config_parse_text(struct config_t *cfg, const char *text, const char *path, struct gf_errbuf *eb)
{
	char *dir = path ? gf_cfg_dir_of(path) : NULL;
	struct gf_cfg_includes *inc = NULL;
	int ok = 0, r = path && !dir
				? GF_E_NOMEM
				: read_checked(cfg, text, path ? path : "<string>", dir, NULL, &inc, &ok, eb);
	if (!r && !ok) {
		const char *ef = gf_cfg_includes_path(inc, config_error_file(cfg));
		gf_errbuf_set(eb, "%s:%d: %s",
			      ef     ? ef
			      : path ? path
				     : "<string>",
			      config_error_line(cfg),
			      config_error_text(cfg) ? config_error_text(cfg) : "parse error");
		config_destroy(cfg);
		r = GF_E_CONFIG;
	}
	gf_cfg_includes_free(inc);
	free(dir);
	return r;
}

static int load_text(const char *path, const char *text, const struct gf_cfg_roots *roots,
		     struct gf_config **out, struct gf_errbuf *eb)
{
	*out = NULL;
	size_t len = strlen(text);
	if (len > GF_CFG_MAX_BYTES) {
		gf_errbuf_set(eb, "%s: the config is over %zu bytes", path, GF_CFG_MAX_BYTES);
		return GF_E_CONFIG;
	}
	struct gf_config *c = calloc(1, sizeof(*c));
	char *dir = gf_cfg_dir_of(path);
	if (!c || !dir || !(c->path = strdup(path)) || !(c->text = strdup(text)) ||
	    gf_cfg_add_file(c, path)) {
		free(dir);
		gf_config_free(c);
		return GF_E_NOMEM;
	}
	struct gf_cfg_includes *inc = NULL;
	config_t cfg;
	int ok, r = read_checked(&cfg, text, path, dir, roots, &inc, &ok, eb);
	if (r < 0) {
		free(dir);
		gf_config_free(c);
		return r;
	}
	set_defaults(c);
	struct gf_cfg_loader L = {.c = c, .eb = eb, .name = path, .base_dir = dir, .inc = inc};
	r = load_common(&cfg, ok, &L, out);
	gf_cfg_includes_free(inc);
	free(dir);
	return r;
}

int gf_config_load_text(const char *path, const char *text, struct gf_config **out, struct gf_errbuf *eb)
{
	return load_text(path, text, NULL, out, eb);
}

int gf_config_load_text_guest(const char *path, const char *text, const struct gf_config *disk,
			      struct gf_config **out, struct gf_errbuf *eb)
{
	struct gf_cfg_roots *roots = NULL;
	*out = NULL;
	int r = gf_cfg_roots_new(disk, &roots);
	if (!r)
		r = load_text(path, text, roots, out, eb);
	gf_cfg_roots_free(roots);
	if (!r && (r = gf_config_policy_check(disk, *out, eb)) < 0) {
		gf_config_free(*out);
		*out = NULL;
	}
	return r;
}

int gf_config_load_string(const char *text, const char *base_dir, struct gf_config **out,
			  struct gf_errbuf *eb)
{
	*out = NULL;
	if (!text)
		return GF_E_INVAL;
	struct gf_config *c = calloc(1, sizeof(*c));
	if (!c)
		return GF_E_NOMEM;
	set_defaults(c);
	struct gf_cfg_includes *inc = NULL;
	config_t cfg;
	int ok, r = read_checked(&cfg, text, "<string>", base_dir, NULL, &inc, &ok, eb);
	if (r == 0 && !(c->text = strdup(text))) {
		config_destroy(&cfg);
		r = GF_E_NOMEM;
	}
	if (r < 0) {
		gf_cfg_includes_free(inc);
		gf_config_free(c);
		return r;
	}
	struct gf_cfg_loader L = {
		.c = c, .eb = eb, .name = "<string>", .base_dir = base_dir ? base_dir : ".", .inc = inc};
	r = load_common(&cfg, ok, &L, out);
	gf_cfg_includes_free(inc);
	return r;
}

int gf_config_load_source(const struct gf_config_source *src, struct gf_config **out, struct gf_errbuf *eb)
{
	int err = src->text && src->path ? gf_config_load_text(src->path, src->text, out, eb)
		  : src->path		 ? gf_config_load(src->path, out, eb)
					 : gf_config_default(out);
	if (err) {
		if (!src->path)
			gf_errbuf_set(eb, "built-in default config: %s", gf_strerror(err));
		return err;
	}
	if (src->backend_set)
		(*out)->backend = src->backend;
	if (src->algo_set)
		(*out)->algo = src->algo;
	(*out)->live = src->live;
	if (src->hum) {
		(*out)->live_hum = *src->hum;
		(*out)->hum_followed = 1;
	}
	return 0;
}

/* The built-in default configuration: the denoise chain gpufir runs with no -c.
 * config/gpufir.conf is this same chain written out (a test checks they match). */
static const char default_text[] =
	"filters = (\n"
	"  { name = \"hum\"; design = \"notch\"; freq_hz = \"auto\"; harmonics = 4;\n"
	"    bandwidth_hz = 15.0; attenuation_db = 40.0; },\n"
	"  { name = \"hiss\"; design = \"lowpass\"; cutoff_hz = 14000.0; transition_hz = 2000.0;\n"
	"    attenuation_db = 60.0; },\n"
	"  { name = \"nr\"; design = \"suppress\"; reduction_db = 15.0; highpass_hz = 25.0; }\n"
	");\n"
	"chain = [\"hum\", \"hiss\", \"nr\"];\n"
	"phase = \"auto\";\n";

int gf_config_default(struct gf_config **out)
{
	struct gf_errbuf eb;
	int r = gf_config_load_string(default_text, NULL, out, &eb);
	if (r) {
		gf_err("built-in default config: %s", eb.msg);
		return r;
	}
	free((*out)->priv->src);
	(*out)->priv->builtin = 1;
	if (!((*out)->priv->src = strdup("<built-in default>")))
		r = GF_E_NOMEM;
	if (r) {
		gf_config_free(*out);
		*out = NULL;
	}
	return r;
}

int gf_config_load_or_default(const char *path, struct gf_config **out, struct gf_errbuf *eb)
{
	if (path)
		return gf_config_load(path, out, eb);
	int err = gf_config_default(out);
	if (err)
		gf_errbuf_set(eb, "built-in configuration: %s", gf_strerror(err));
	return err;
}

/* ---- queries of the top level ---------------------------------------------- */

/* Added for --check-config (main.c): the channel count the routes need. */
uint32_t gf_config_min_channels(const struct gf_config *c)
{
	if (c->mixer)
		return c->mixer->inputs;
	uint32_t n = 0;
	for (uint32_t i = 0; i < c->n_routes; i++)
		if (c->routes[i].channel + 1 > n)
			n = c->routes[i].channel + 1;
	return n;
}

/* ---- free --------------------------------------------------------------- */

static void free_names(char **v, uint32_t n)
{
	if (!v)
		return;
	for (uint32_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void gf_config_free(struct gf_config *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->n_filters; i++) {
		free(c->filters[i].name);
		free(c->filters[i].src);
		free(c->filters[i].coeffs);
		free(c->filters[i].file);
		for (uint32_t k = 0; k < c->filters[i].n_by_rate; k++)
			free(c->filters[i].by_rate[k].file);
		free(c->filters[i].by_rate);
		gf_peq_free(c->filters[i].peq);
		free(c->filters[i].peq);
	}
	free(c->filters);
	for (uint32_t i = 0; i < c->n_routes; i++) {
		free(c->routes[i].src);
		free_names(c->routes[i].chain, c->routes[i].n_chain);
	}
	free(c->routes);
	gf_cfg_mixer_free(c->mixer);
	free_names(c->chain, c->n_chain);
	free_names(c->files, c->n_files);
	struct gf_audio_endpoint *eps[2] = {&c->input, &c->output};
	for (int i = 0; i < 2; i++) {
		free(eps[i]->device);
		free(eps[i]->host_api);
		free(eps[i]->file);
	}
	free(c->status_socket);
	free(c->state_file);
	free(c->control_socket);
	free(c->control_address);
	free_names(c->control_allowed_origins, c->n_control_allowed_origins);
	free(c->control_key_file);
	free(c->text);
	free(c->path);
	if (c->priv) {
		free(c->priv->src);
		gf_strmap_free(c->priv->filter_index);
		gf_strmap_free(c->priv->file_index);
	}
	free(c->priv);
	free(c);
}
