/**
 * @file api.h
 * The JSON control API (docs/api.md): CamillaDSP's command names and reply
 * shapes, served over a Unix stream socket (one JSON message per line) and,
 * when configured, a WebSocket (libwebsockets). Same protocol on both.
 *
 * Folder src/api/ (the protocol: commands in, replies out, in api_proto.c and
 * api_cmds.c; the transports in api_server.c, api_unix.c and api_ws.c, whose
 * port also serves plain HTTP (api_ws_http.c) under the browser rules of
 * api_origin.c; the `--status --json` client in api_client.c): this header is
 * its entry point.
 * It stands on base only and knows nothing of the daemon: the daemon fills
 * in a struct gf_api_ops, so the protocol can be driven by a fake in tests.
 *
 * Control thread only. Nothing here blocks: sockets are non-blocking, the
 * work per gf_api_server_service() call is bounded (messages per client,
 * bytes read, clients), and every client's buffers are bounded.
 */
#ifndef GPUFIR_API_H
#define GPUFIR_API_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/** Largest command (a SetConfig's text included), bytes; a longer one is answered and dropped. */
#define GF_API_MAX_MSG (256u * 1024u)
/** Largest reply, bytes (GetConfig of a larger config is an error reply). */
#define GF_API_MAX_REPLY (512u * 1024u)
/** Replies a client may have waiting unread; one more and it is disconnected. */
#define GF_API_MAX_QUEUED 16u
/** Clients at once, per transport; one more is refused. */
#define GF_API_MAX_CLIENTS 16u
/** WebSocket connections from one peer address at once: one host cannot take every slot. */
#define GF_API_MAX_PER_PEER 8u
/** A connection that has not sent a whole request (HTTP, or its WebSocket upgrade) this long after
 *  it was accepted or last answered is closed, ms. */
#define GF_API_HANDSHAKE_MS 5000
/** Input that does not make a whole message (a partial frame or line) this long is challenged
 *  (WebSocket: a ping, which a client mid-frame cannot answer), and closed as long again later, ms. */
#define GF_API_PARTIAL_MS 5000
/** A Unix-socket client with no request this long (and no reply pending, no subscription) is
 *  closed when the table is full and another knocks, ms: idle holders cannot keep one out. */
#define GF_API_UNIX_IDLE_MS 10000
/** Channels in a level reply. */
#define GF_API_MAX_CH 64u
/** Level subscriptions: the shortest interval a client may ask for, and the longest. */
#define GF_API_LEVELS_MIN_MS 20u
#define GF_API_LEVELS_MAX_MS 10000u
/** Where the Unix socket is when the config names none and there is no RuntimeDirectory. */
#define GF_API_DEFAULT_SOCKET "/run/gpufir/control"
/** WebSocket address when `control_port` is set and `control_address` is not. */
#define GF_API_DEFAULT_ADDRESS "127.0.0.1"

/** An op's answer is on its way (gf_api_complete): the reply waits. */
#define GF_API_PENDING 1

/** The stages after the FIR that have live controls. */
enum gf_api_stage_id {
	GF_API_SUPPRESSOR, /**< the noise suppressor (design = "suppress"): GetSuppressor, SetSuppressor */
	GF_API_NEURAL,	   /**< the neural stage (design = "deepfilter"): GetNeural, SetNeural */
	GF_API_STAGES
};

/** A stage's live controls (its Get and Set commands, GetStatus): its bypass and the most it cuts
 *  any bin, the noise suppressor's depth_db or the neural stage's atten_lim_db. */
struct gf_api_stage {
	uint32_t channels; /**< channels that run the stage; 0: none runs */
	int has_bypass;	   /**< a request: bypass is set */
	int bypass;	   /**< 1: the stage passes its input (delayed by its latency) */
	int has_db;	   /**< a request: db is set */
	double db;	   /**< the most a bin is cut, dB */
	double max_db;	   /**< the largest db may be */
};

/** What `GetStatus` (and `gpufir --status --json`) reports; strings may be NULL. */
struct gf_api_status {
	const char *state;	/**< CamillaDSP's: "Running", "Paused", "Inactive", "Starting", "Stalled" */
	const char *state_text; /**< gpufir's own words ("audio device lost, retrying") */
	/** CamillaDSP's StopReason: "None", "Done", "CaptureError", "PlaybackError",
	 *  "CaptureFormatChange", "PlaybackFormatChange" (GetStopReason sends the errors with
	 *  @p stop_text, as {"CaptureError": text}) */
	const char *stop_reason;
	const char *stop_text;	 /**< the lost stream's message (gpufir's words), or NULL */
	const char *state_file;	 /**< the volume's state file; NULL: none */
	int state_file_updated;	 /**< 1: every volume and mute change is written there */
	double rate_adjust;	 /**< playback/capture rate ratio of the resampler; 1.0 without one */
	const char *config_path; /**< NULL: the built-in default */
	const char *capture_device, *playback_device; /**< as configured; NULL: the default device */
	const char *backend, *algo, *engine_device;
	const char *last_reload;    /**< NULL: none yet */
	const char *const *filters; /**< the chain's filter names */
	uint32_t n_filters;
	long pid;
	double uptime_s;
	uint32_t sample_rate, capture_rate, channels, block_frames, latency_frames, taps;
	int32_t buffer_level;	/**< playback margin, frames (lowest of the last window); -1: unknown */
	double processing_load; /**< block time (median, last window) over the block period, percent */
	double block_us_p99;
	double signal_peak; /**< output peak of the last window, linear (GetSignalRange is twice it) */
	/** the volumes SetVolume can reach, dB (the floor, volume_limit_db); equal: unknown */
	double volume_min_db, volume_max_db;
	uint64_t blocks, clipped, xruns, device_xruns, late_blocks, muted_blocks, engine_errors, swaps;
	uint64_t reloads, reload_failures;
	struct gf_api_stage stages[GF_API_STAGES]; /**< by gf_api_stage_id; channels 0: none runs */
};

/** Most devices a device list reports. */
#define GF_API_MAX_DEVICES 64

/** An audio device (GetAvailableCaptureDevices, GetAvailablePlaybackDevices). */
struct gf_api_device {
	char name[128];
	char host_api[32];
	uint32_t channels;
	double rate;
	int is_default;
};

/** Per-channel levels, dBFS (CamillaDSP's GetSignalLevels); silence is -1000. */
struct gf_api_levels {
	uint32_t n_capture, n_playback;
	double interval_s; /**< the audio the reading covers, s (0: none since the previous one) */
	double capture_peak[GF_API_MAX_CH], capture_rms[GF_API_MAX_CH];
	double playback_peak[GF_API_MAX_CH], playback_rms[GF_API_MAX_CH];
};

/**
 * What the protocol asks of the program. Each op returns 0, a negative GF_E_*
 * with the reason in @p eb, or (set_config, reload) GF_API_PENDING: the
 * program answers later with gf_api_complete(@p token). Control thread; an op
 * may not block for long (slow work goes to another thread and completes).
 */
struct gf_api_ops {
	void *ctx;
	int (*status)(void *ctx, struct gf_api_status *st);
	/** The running config's text (@p previous: the one before it; NULL text: none). */
	int (*config_text)(void *ctx, int previous, const char **text, struct gf_errbuf *eb);
	/** Parse and validate @p text as a whole; nothing changes. */
	int (*validate_config)(void *ctx, const char *text, struct gf_errbuf *eb);
	/** Validate, build and apply @p text; on any failure the running config stays. */
	int (*set_config)(void *ctx, const char *text, uint64_t token, struct gf_errbuf *eb);
	/**
	 * PatchConfig: the running config with the top-level settings @p keys
	 * (@p n of them) removed and @p settings ("key = value;" lines,
	 * libconfig syntax) added, then as set_config.
	 */
	int (*patch_config)(void *ctx, const char *settings, const char *const *keys, uint32_t n,
			    uint64_t token, struct gf_errbuf *eb);
	/** Reload the config file, as SIGHUP does. */
	int (*reload)(void *ctx, uint64_t token, struct gf_errbuf *eb);
	int (*get_volume)(void *ctx, double *db, struct gf_errbuf *eb);
	int (*set_volume)(void *ctx, double db, struct gf_errbuf *eb);
	int (*get_mute)(void *ctx, int *mute, struct gf_errbuf *eb);
	int (*set_mute)(void *ctx, int mute, struct gf_errbuf *eb);
	/** Peak and RMS per channel since the previous call (any client's). */
	int (*levels)(void *ctx, struct gf_api_levels *lv, struct gf_errbuf *eb);
	/** ResetClippedSamples: the clipped count starts again from 0. */
	int (*reset_clipped)(void *ctx, struct gf_errbuf *eb);
	/** The audio devices with capture (@p playback 0) or playback channels, up to @p max of
	 * them in @p out, how many there are in @p n. */
	int (*devices)(void *ctx, int playback, struct gf_api_device *out, uint32_t max, uint32_t *n,
		       struct gf_errbuf *eb);
	/** The running filters' response as an SVG document of *@p len bytes (GET /response.svg), or
	 *  NULL: none drawn. Read at once: it may change after the call. May be NULL. */
	const char *(*response_svg)(void *ctx, size_t *len);
	/** Stage @p id's live controls now (channels 0: none runs). May be NULL. */
	int (*get_stage)(void *ctx, enum gf_api_stage_id id, struct gf_api_stage *out, struct gf_errbuf *eb);
	/** Set @p q's has_ members on stage @p id, ramped (no restart); *@p out: what is in force
	 *  after. May be NULL. */
	int (*set_stage)(void *ctx, enum gf_api_stage_id id, const struct gf_api_stage *q,
			 struct gf_api_stage *out, struct gf_errbuf *eb);
};

/* ---- the protocol (api_proto.c, api_cmds.c) ---------------------------- */

struct gf_api;

/**
 * A client's standing (docs/api.md, "What a client may change"): its
 * transport sets it on connecting, `Authenticate` with the control key makes
 * it the owner. The daemon's policy limits what a guest's config may change.
 */
enum gf_api_standing {
	GF_API_GUEST = 0, /**< may use the API; its configs are held to the file on disk's settings */
	GF_API_OWNER,	  /**< the daemon's own user or root (Unix peer), or gave the control key */
	GF_API_LOCKED	  /**< a WebSocket beyond loopback: nothing but Authenticate (and GetVersion) */
};

/** Set @p client's standing (the transports, on connecting). @return 0, or GF_E_BUSY when no
 *  more clients can be told apart (it is then a guest: a locked client must be closed). */
int gf_api_client_standing(struct gf_api *a, void *client, enum gf_api_standing s);
/** The control key `Authenticate` checks against (copied; NULL or "": none, it always fails). */
int gf_api_set_key(struct gf_api *a, const char *key);
/** Inside an op: 1 when the client that sent the command is the owner. */
int gf_api_caller_is_owner(const struct gf_api *a);

/** A reply to send: @p text is one JSON document, no newline. */
typedef void (*gf_api_send_fn)(void *client, const char *text, size_t len);

int gf_api_new(struct gf_api **out, const struct gf_api_ops *ops);
void gf_api_free(struct gf_api *a);

/**
 * Handle one message of @p len bytes from @p client (any bytes: not JSON,
 * unknown commands and bad arguments get an error reply). Replies go through
 * @p send now or, for a pending op, at gf_api_complete(), if the client is
 * still there (gf_api_client_gone).
 */
void gf_api_handle(struct gf_api *a, void *client, gf_api_send_fn send, const char *msg, size_t len);

/** A pending op is done: reply to its client (0, or an error and @p why). */
void gf_api_complete(struct gf_api *a, uint64_t token, int err, const char *why);

/** @p client went away: drop its pending replies and subscription. */
void gf_api_client_gone(struct gf_api *a, void *client);

/** 1 while @p client waits for a pending reply or holds a level subscription: it is not idle. */
int gf_api_client_busy(const struct gf_api *a, const void *client);

/** Push levels to subscribers that are due. @return ms until the next is due, or -1: none. */
int gf_api_tick(struct gf_api *a, int64_t now_ms);

/** The JSON object GetStatus returns (malloc'ed, NUL-terminated), or NULL. */
char *gf_api_status_json(const struct gf_api_status *st, int pretty);

/* ---- the transports (api_server.c) -------------------------------------- */

struct gf_api_server_params {
	const char *unix_path; /**< NULL: no Unix socket */
	const char *address;   /**< WebSocket address; NULL: GF_API_DEFAULT_ADDRESS */
	int port;	       /**< WebSocket port; 0: no WebSocket */
	/** Web origins ("http://host:port", as validated by the config) whose pages may use the
	 *  WebSocket besides the daemon's own page; copied */
	const char *const *allowed_origins;
	uint32_t n_allowed_origins;
};

struct gf_api_server;

/** Listen as @p p says, serving @p a. @return 0, GF_E_BUSY, GF_E_INVAL or GF_E_SYSTEM */
int gf_api_server_new(struct gf_api_server **out, struct gf_api *a, const struct gf_api_server_params *p,
		      struct gf_errbuf *eb);
void gf_api_server_free(struct gf_api_server *s);

/** Descriptors to poll: fills up to @p max entries of @p fds. @return how many */
int gf_api_server_pollfds(struct gf_api_server *s, struct pollfd *fds, int max);
/** Most entries gf_api_server_pollfds can fill. */
#define GF_API_POLLFDS (2 + 2 * (int)GF_API_MAX_CLIENTS)

/**
 * Accept, read, answer and write what is ready (@p fds as polled), a bounded
 * amount, never blocking; push due level subscriptions.
 * @return ms until the server wants to run again (0: more input is waiting), or -1
 */
int gf_api_server_service(struct gf_api_server *s, const struct pollfd *fds, int n);

/**
 * 1 while the Unix socket's file is the one the server bound (or there is no
 * Unix socket); 0 once it was removed or replaced: no client can reach it.
 */
int gf_api_server_bound(const struct gf_api_server *s);

/** Clients connected now (both transports). */
unsigned gf_api_server_clients(const struct gf_api_server *s);

/** Clients with replies not yet written (both transports): a server about to
 *  move waits for them, so that a requester gets its answer first. */
unsigned gf_api_server_unsent(const struct gf_api_server *s);

/* ---- client (api_client.c) ----------------------------------------------- */

/**
 * Send @p command to the Unix socket at @p path and read one reply line into
 * *@p reply (malloc'ed), waiting at most @p timeout_ms in all.
 * @return 0, GF_E_IO (no daemon there / timed out), GF_E_NOMEM or GF_E_INVAL
 */
int gf_api_call(const char *path, const char *command, char **reply, int timeout_ms, struct gf_errbuf *eb);

/** `gpufir --status --json`: GetStatus's value, printed. @return a GF_EXIT_* code */
int gf_api_print_status(const char *path);

#endif
