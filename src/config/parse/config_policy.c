/*
 * What a config from a client that is not the owner may change (docs/api.md,
 * "What a client may change"). The file on disk is the owner's word: a
 * guest's config must keep its protected settings (where the daemon listens,
 * its state and key files, the recording file), may not raise its limits
 * (max_taps, volume_limit_db), and may read files only under the config's
 * folder or a folder the file on disk itself reads from, resolved with
 * realpath so that `..` and links lead nowhere else (those folders:
 * gf_cfg_roots, config_paths.c). Includes are checked as they are opened
 * (config_scan.c, through gf_cfg_roots_allow); the other files are checked
 * here, after the parse and before anything reads them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"

/* control_address unset: the WebSocket's default (GF_API_DEFAULT_ADDRESS, a layer above). */
#define DEFAULT_ADDRESS "127.0.0.1"

/* @p path, or its folder where it does not exist (yet), resolved; 0 when under @p r. */
static int check_file(const struct gf_cfg_roots *r, const char *setting, const char *path,
		      struct gf_errbuf *eb)
{
	char *real = realpath(path, NULL);
	if (!real) {
		char *dir = gf_cfg_dir_of(path);
		real = dir ? realpath(dir, NULL) : NULL;
		free(dir);
	}
	int ok = real && gf_cfg_roots_allow(r, real);
	free(real);
	if (ok)
		return 0;
	gf_errbuf_set(eb,
		      "%s: %s is outside the config's folder and the folders the config file on disk "
		      "reads from: only the owner may name it (Authenticate with the control key)",
		      setting, path);
	return GF_E_CONFIG;
}

/* Every file @p req reads: its filters' (by name), then every other file it watches. */
static int check_files(const struct gf_cfg_roots *r, const struct gf_config *req, struct gf_errbuf *eb)
{
	int err = 0;
	for (uint32_t i = 0; !err && i < req->n_filters; i++) {
		const struct gf_config_filter *f = &req->filters[i];
		char setting[160];
		snprintf(setting, sizeof(setting), "filters.%s.file", f->name ? f->name : "?");
		if (f->file)
			err = check_file(r, setting, f->file, eb);
		for (uint32_t k = 0; !err && k < f->n_by_rate; k++)
			err = check_file(r, setting, f->by_rate[k].file, eb);
	}
	/* the rest it watches: includes (checked as they were opened), per-rate expansions */
	for (uint32_t i = 0; !err && i < req->n_files; i++)
		err = check_file(r, "a file the config reads", req->files[i], eb);
	return err;
}

static int same_str(const char *a, const char *b, const char *dflt)
{
	a = a ? a : dflt;
	b = b ? b : dflt;
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int protected_changed(const char *setting, const char *disk, const char *req, struct gf_errbuf *eb)
{
	gf_errbuf_set(eb,
		      "%s: only the owner may change it (the config file says %s, the request %s): "
		      "Authenticate with the control key, or edit the file",
		      setting, disk ? disk : "nothing", req ? req : "nothing");
	return GF_E_CONFIG;
}

/* The web pages that may use the WebSocket: a guest adding one would let that page in. */
static int check_origins(const struct gf_config *disk, const struct gf_config *req, struct gf_errbuf *eb)
{
	int same = disk->n_control_allowed_origins == req->n_control_allowed_origins;
	for (uint32_t i = 0; same && i < disk->n_control_allowed_origins; i++)
		same = strcmp(disk->control_allowed_origins[i], req->control_allowed_origins[i]) == 0;
	if (same)
		return 0;
	char a[32], b[32];
	snprintf(a, sizeof(a), "%u origins", disk->n_control_allowed_origins);
	snprintf(b, sizeof(b), "%u others", req->n_control_allowed_origins);
	return protected_changed("control_allowed_origins", a, b, eb);
}

/* Where the daemon listens, its state and key files, the recording: as the file on disk has them. */
static int check_protected(const struct gf_config *disk, const struct gf_config *req, struct gf_errbuf *eb)
{
	const struct {
		const char *name, *disk, *req, *dflt;
	} s[] = {
		{"control_socket", disk->control_socket, req->control_socket, NULL},
		{"control_address", disk->control_address, req->control_address, DEFAULT_ADDRESS},
		{"status_socket", disk->status_socket, req->status_socket, NULL},
		{"state_file", disk->state_file, req->state_file, NULL},
		{"control_key_file", disk->control_key_file, req->control_key_file, NULL},
		{"output.file", disk->output.file, req->output.file, NULL},
	};
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (!same_str(s[i].disk, s[i].req, s[i].dflt))
			return protected_changed(s[i].name, s[i].disk ? s[i].disk : s[i].dflt,
						 s[i].req ? s[i].req : s[i].dflt, eb);
	if (disk->control_port != req->control_port) {
		char a[16], b[16];
		snprintf(a, sizeof(a), "%d", disk->control_port);
		snprintf(b, sizeof(b), "%d", req->control_port);
		return protected_changed("control_port", a, b, eb);
	}
	return check_origins(disk, req, eb);
}

/* Limits may be lowered, never raised (max_taps 0 is "auto": only auto stays within it). */
static int check_limits(const struct gf_config *disk, const struct gf_config *req, struct gf_errbuf *eb)
{
	if (disk->max_taps ? req->max_taps == 0 || req->max_taps > disk->max_taps : req->max_taps != 0) {
		gf_errbuf_set(eb,
			      "max_taps: only the owner may raise it (the config file allows %u%s, the "
			      "request %u%s)",
			      disk->max_taps, disk->max_taps ? "" : " (auto)", req->max_taps,
			      req->max_taps ? "" : " (auto)");
		return GF_E_CONFIG;
	}
	if (req->volume_limit_db > disk->volume_limit_db) {
		gf_errbuf_set(eb,
			      "volume_limit_db: only the owner may raise it (the config file allows %.1f dB, "
			      "the request %.1f dB)",
			      disk->volume_limit_db, req->volume_limit_db);
		return GF_E_CONFIG;
	}
	return 0;
}

int gf_config_policy_check(const struct gf_config *disk, const struct gf_config *req, struct gf_errbuf *eb)
{
	struct gf_cfg_roots *r = NULL;
	int err = check_protected(disk, req, eb);
	if (!err)
		err = check_limits(disk, req, eb);
	if (!err)
		err = gf_cfg_roots_new(disk, &r);
	if (!err)
		err = check_files(r, req, eb);
	gf_cfg_roots_free(r);
	return err;
}
