/* The native PipeWire host: gpufir as a node of the desktop's audio graph
 * (docs/live.md, "Native PipeWire"), in one of two directions. Two pw_streams
 * in one node group, so one driver clocks both: one stream is gpufir's own
 * node, which apps see; the other names no target (or the config's node), so
 * the session manager links it to the default device and relinks it when the
 * default changes or the device goes and comes back.
 * - source (input.host_api = "PipeWire"): "gpufir_capture", an input stream
 *   from the default source, and "gpufir_denoised", an output stream of
 *   media.class Audio/Source: the virtual microphone that apps record;
 * - sink (output.host_api = "PipeWire"): "gpufir_speakers", an input stream of
 *   media.class Audio/Sink that apps play into, and "gpufir_playback", an
 *   output stream to the default sink: the virtual speakers.
 * The input stream's process callback, on PipeWire's real-time data thread
 * (PW_STREAM_FLAG_RT_PROCESS), takes its buffer and one of the output stream
 * and runs the shared duplex callback (live_audio.c) on both: the same rings,
 * worker, latency and counters as PortAudio's duplex stream. Every other event
 * (state, core errors) comes on the pw_thread_loop's thread; the control
 * thread talks to it only under the loop's lock. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>
#include <spa/param/latency-utils.h>
#include <spa/utils/result.h>

#include "live_internal.h"
#include "live_pipewire_name.h"
#include "log.h"
#include "pinned.h"

#define CONNECT_MS 2000 /* how long gf_live_pw_open waits for the streams to reach the server */

/* What one stream is to the graph. */
struct pw_role {
	char name[128];		 /* node.name (copied: the config's may go before the stream) */
	const char *desc;	 /* node.description: what desktop mixers show */
	const char *media_class; /* gpufir's own node: "Audio/Source" or "Audio/Sink"; else NULL */
	const char *category;	 /* the stream to or from a device: "Capture" or "Playback"; else NULL */
	const char *target;	 /* that stream's target.object (NULL: the default device, followed) */
};

struct gf_live_pw {
	struct gf_live *l;
	struct pw_thread_loop *loop;
	struct pw_context *context;
	struct pw_core *core;
	struct spa_hook core_listener;
	/* in: runs the callback (the capture, or gpufir's sink); out: the other (gpufir's source, or
	 * the playback). node: the one apps see, whose ports carry the latency; dev: the other. */
	struct pw_stream *in, *out, *node, *dev;
	struct spa_hook in_listener, out_listener;
	int sink;			/* the direction: 1 sink, 0 source */
	enum spa_direction lat_dir;	/* the latency told: capture (OUTPUT) or playback (INPUT) */
	struct pw_role role[2];		/* in, out */
	uint32_t in_stride, out_stride; /* bytes per interleaved frame */
	/* The callback's output when the output stream has no buffer (nothing is
	 * linked to it yet) or a smaller one: the audio still runs through the worker. */
	float *scratch;
	size_t scratch_bytes;
	atomic_int lost;  /* set on the loop's thread; why[] is written before it */
	char why[256];	  /* loop thread, then read-only */
	int connected[2]; /* in, out reached PAUSED or STREAMING (loop thread, locked) */
	/* The graph runs the input stream, something being linked to it (set on the loop's thread). */
	atomic_int in_streaming;
	/* What the graph is told of the node's latency (publish_latency); under the loop's lock. */
	uint32_t reported;		/* gpufir's own frames last told (0: nothing yet) */
	struct spa_latency_info device; /* the device's latency the dev stream is told */
	/* Missed graph cycles (missed_cycles), data thread only but for resync. */
	atomic_int resync; /* set on a state change: the next callback starts the count afresh */
	uint64_t ticks;	   /* the graph clock's position at the last callback */
	int64_t now_ns;	   /* and the monotonic time it was taken at */
	uint32_t frames;   /* the frames that callback took: the clock's advance by the next */
};

/* Loop thread: the first reason wins; the control thread reads it after the flag. */
static void mark_lost(struct gf_live_pw *pw, const char *fmt, const char *a, const char *b)
{
	if (atomic_load(&pw->lost))
		return;
	snprintf(pw->why, sizeof(pw->why), fmt, a, b);
	atomic_store_explicit(&pw->lost, 1, memory_order_release);
	pw_thread_loop_signal(pw->loop, false);
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct gf_live_pw *pw = data;
	(void)seq;
	/* Errors about one object (a link refused) leave the stream running; the
	 * core's own (EPIPE: the server quit or restarted) end the connection. */
	if (id == PW_ID_CORE)
		mark_lost(pw, "the PipeWire server connection ended (%s: %s)", spa_strerror(res),
			  message ? message : "");
}

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	.error = on_core_error,
};

static void state_changed(struct gf_live_pw *pw, int side, enum pw_stream_state state, const char *error)
{
	if (state == PW_STREAM_STATE_ERROR)
		mark_lost(pw, "PipeWire stream %s failed: %s", pw->role[side].name,
			  error ? error : "unknown error");
	if (state == PW_STREAM_STATE_PAUSED || state == PW_STREAM_STATE_STREAMING)
		pw->connected[side] = 1;
	if (!side)
		atomic_store_explicit(&pw->in_streaming, state == PW_STREAM_STATE_STREAMING,
				      memory_order_release);
	atomic_store_explicit(&pw->resync, 1, memory_order_release);
	pw_thread_loop_signal(pw->loop, false);
}

static void on_in_state(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error)
{
	(void)old;
	state_changed(data, 0, state, error);
}

static void on_out_state(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error)
{
	(void)old;
	state_changed(data, 1, state, error);
}

/* Under the loop's lock: tell the graph how far gpufir's node lags the device on the other side,
 * on the node's ports. A source's output ports carry a capture latency (direction OUTPUT, what its
 * consumers add up: how far they lag the microphone); a sink's input ports a playback latency
 * (direction INPUT, what its producers add up: how far the speakers lag them). Either is the
 * device's own (the graph tells the dev stream), plus gpufir's @p frames (the stream's and the
 * suppressor's: total_latency_frames), plus one quantum, since the output stream's buffer, filled
 * in one graph cycle, is read in the next (docs/live.md, "Latency"). The stream passes a param of
 * its own direction to its adapter, which puts it on the node's ports (as module-loopback does in
 * this libpipewire, 0.3.65). */
static void publish_latency(struct gf_live_pw *pw, uint32_t frames)
{
	struct spa_latency_info info = pw->device;
	info.direction = pw->lat_dir;
	info.min_quantum += 1.0f;
	info.max_quantum += 1.0f;
	info.min_rate += frames;
	info.max_rate += frames;
	uint8_t buf[256];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	const struct spa_pod *param = spa_latency_build(&b, SPA_PARAM_Latency, &info);
	if (param && pw_stream_update_params(pw->node, &param, 1) >= 0)
		pw->reported = frames;
}

/* Loop thread (locked): the graph tells the dev stream the latency of the device it is linked to
 * (a capture latency from the microphone, a playback latency from the speakers), passed on to
 * gpufir's node with gpufir's own added. */
static void on_dev_param(struct gf_live_pw *pw, uint32_t id, const struct spa_pod *param)
{
	struct spa_latency_info info;
	if (id != SPA_PARAM_Latency || !param || spa_latency_parse(param, &info) < 0 ||
	    info.direction != pw->lat_dir)
		return;
	pw->device = info;
	if (pw->reported)
		publish_latency(pw, pw->reported);
}

static void on_in_param(void *data, uint32_t id, const struct spa_pod *param)
{
	struct gf_live_pw *pw = data;
	if (!pw->sink)
		on_dev_param(pw, id, param);
}

static void on_out_param(void *data, uint32_t id, const struct spa_pod *param)
{
	struct gf_live_pw *pw = data;
	if (pw->sink)
		on_dev_param(pw, id, param);
}

/* Where the callback writes @p n frames: the output stream's buffer when it
 * has one that holds them, else the scratch buffer (copied below). RT. */
static float *out_frames(struct gf_live_pw *pw, struct pw_buffer *out, uint32_t n)
{
	if (out) {
		struct spa_data *d = &out->buffer->datas[0];
		if (d->data && d->maxsize >= n * pw->out_stride)
			return d->data;
	}
	return pw->scratch;
}

static void finish_out(struct gf_live_pw *pw, struct pw_buffer *out, const float *o, uint32_t n)
{
	struct spa_data *d = &out->buffer->datas[0];
	uint32_t fit = d->data ? d->maxsize / pw->out_stride : 0;
	if (fit > n)
		fit = n;
	if (o == pw->scratch && fit)
		memcpy(d->data, o, (size_t)fit * pw->out_stride);
	d->chunk->offset = 0;
	d->chunk->stride = (int32_t)pw->out_stride;
	d->chunk->size = (o == pw->scratch ? fit : n) * pw->out_stride;
	pw_stream_queue_buffer(pw->out, out);
}

/* Whether the graph ran cycles without this node since its last callback: the clock moved on by
 * more than the @p n frames that callback took, and the monotonic clock agrees (a clock of
 * another driver, after a relink, starts elsewhere; an idle node is not scheduled, and its state
 * changes, which resyncs). libpipewire 0.3.65 tells a stream no xrun of its own: this is what a
 * client sees of one. Counted as the device's xrun (device_xruns). RT. */
static PaStreamCallbackFlags missed_cycles(struct gf_live_pw *pw, uint32_t n)
{
	struct pw_time t;
	if (pw_stream_get_time_n(pw->in, &t, sizeof(t)) < 0 || !t.rate.denom || !t.rate.num)
		return 0;
	int fresh = atomic_exchange_explicit(&pw->resync, 0, memory_order_acq_rel) || !pw->frames;
	uint64_t rate = pw->l->rate, ticks = t.ticks - pw->ticks;
	uint64_t moved = ticks * t.rate.num * rate / t.rate.denom;	       /* frames at gpufir's rate */
	uint64_t waited = (uint64_t)(t.now - pw->now_ns) * rate / 1000000000u; /* frames of wall time */
	uint64_t slack = pw->frames + pw->frames / 2;
	int missed = !fresh && t.ticks > pw->ticks && moved > slack && waited > slack;
	pw->ticks = t.ticks;
	pw->now_ns = t.now;
	pw->frames = n;
	return missed ? paOutputUnderflow : 0;
}

/* The real-time callback: no allocation, lock, logging or I/O, as PortAudio's. */
static void on_in_process(void *data)
{
	struct gf_live_pw *pw = data;
	struct pw_buffer *in = pw_stream_dequeue_buffer(pw->in);
	if (!in)
		return;
	struct spa_data *d = &in->buffer->datas[0];
	uint32_t off = d->chunk->offset < d->maxsize ? d->chunk->offset : d->maxsize;
	uint32_t size = d->chunk->size < d->maxsize - off ? d->chunk->size : d->maxsize - off;
	uint32_t n = size / pw->in_stride;
	if (n > GF_LIVE_MAX_PERIOD)
		n = GF_LIVE_MAX_PERIOD;
	if (d->data && n) {
		struct pw_buffer *out = pw_stream_dequeue_buffer(pw->out);
		float *o = out_frames(pw, out, n);
		gf_live_duplex_cb(SPA_PTROFF(d->data, off, const void), o, n, NULL, missed_cycles(pw, n),
				  pw->l);
		if (out)
			finish_out(pw, out, o, n);
	}
	pw_stream_queue_buffer(pw->in, in);
}

static const struct pw_stream_events in_events = {
	PW_VERSION_STREAM_EVENTS,
	.state_changed = on_in_state,
	.param_changed = on_in_param,
	.process = on_in_process,
};

/* The output stream has no process callback: its buffers are filled and
 * queued by the input stream's, in the same graph cycle. */
static const struct pw_stream_events out_events = {
	PW_VERSION_STREAM_EVENTS,
	.state_changed = on_out_state,
	.param_changed = on_out_param,
};

static const struct spa_pod *audio_format(struct spa_pod_builder *b, uint32_t channels, uint32_t rate)
{
	struct spa_audio_info_raw info = {.format = SPA_AUDIO_FORMAT_F32, .channels = channels, .rate = rate};
	/* Mono, stereo, or as many auxiliary channels (a mixer's outputs). */
	for (uint32_t i = 0; i < channels && i < SPA_AUDIO_MAX_CHANNELS; i++)
		info.position[i] = channels == 1   ? SPA_AUDIO_CHANNEL_MONO
				   : channels == 2 ? (i ? SPA_AUDIO_CHANNEL_FR : SPA_AUDIO_CHANNEL_FL)
						   : SPA_AUDIO_CHANNEL_AUX0 + i;
	return spa_format_audio_raw_build(b, SPA_PARAM_EnumFormat, &info);
}

/* One stream of @p r. Both share one node group (one driver, one clock), one
 * link group (the session manager never links gpufir's node to its own other
 * stream, even when the node is made the default source or sink), and the
 * quantum and rate gpufir asks the graph for. NULL with errno set. */
static struct pw_stream *new_stream(struct gf_live_pw *pw, const struct pw_role *r, const char *group)
{
	const struct gf_live *l = pw->l;
	struct pw_properties *pr = pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_NODE_GROUP, group,
						     PW_KEY_NODE_LINK_GROUP, group, PW_KEY_NODE_NAME, r->name,
						     PW_KEY_NODE_DESCRIPTION, r->desc, NULL);
	if (!pr)
		return NULL;
	pw_properties_setf(pr, PW_KEY_NODE_LATENCY, "%u/%u", l->block, l->rate);
	pw_properties_setf(pr, PW_KEY_NODE_RATE, "1/%u", l->rate);
	if (r->media_class)
		pw_properties_set(pr, PW_KEY_MEDIA_CLASS, r->media_class);
	if (r->category)
		pw_properties_set(pr, PW_KEY_MEDIA_CATEGORY, r->category);
	if (r->target)
		pw_properties_set(pr, PW_KEY_TARGET_OBJECT, r->target);
	/* pw_stream_new takes the properties, also on failure. */
	return pw_stream_new(pw->core, r->name, pr);
}

/* Connect @p s in @p dir with the config's format; the dev stream autoconnects. */
static int connect_stream(struct gf_live_pw *pw, struct pw_stream *s, enum pw_direction dir,
			  uint32_t channels)
{
	uint8_t buf[1024];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	const struct spa_pod *fmt[1] = {audio_format(&b, channels, pw->l->rate)};
	enum pw_stream_flags f =
		PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS | PW_STREAM_FLAG_INACTIVE;
	return pw_stream_connect(s, dir, PW_ID_ANY, s == pw->dev ? f | PW_STREAM_FLAG_AUTOCONNECT : f, fmt,
				 1);
}

static int make_streams(struct gf_live_pw *pw, struct gf_errbuf *eb)
{
	char group[64];
	snprintf(group, sizeof(group), "gpufir-%ld", (long)getpid());
	pw->in = new_stream(pw, &pw->role[0], group);
	pw->out = pw->in ? new_stream(pw, &pw->role[1], group) : NULL;
	if (!pw->in || !pw->out) {
		gf_errbuf_set(eb, "cannot create the PipeWire streams: %s", strerror(errno));
		return GF_E_AUDIO;
	}
	pw->node = pw->sink ? pw->in : pw->out;
	pw->dev = pw->sink ? pw->out : pw->in;
	pw_stream_add_listener(pw->in, &pw->in_listener, &in_events, pw);
	pw_stream_add_listener(pw->out, &pw->out_listener, &out_events, pw);
	int r = connect_stream(pw, pw->in, PW_DIRECTION_INPUT, pw->l->channels);
	if (r >= 0)
		r = connect_stream(pw, pw->out, PW_DIRECTION_OUTPUT, pw->l->out_channels);
	if (r < 0) {
		gf_errbuf_set(eb, "cannot connect the PipeWire streams: %s", spa_strerror(r));
		return GF_E_AUDIO;
	}
	return 0;
}

/* Under the lock: until both streams reached the server, it failed, or CONNECT_MS. */
static int wait_connected(struct gf_live_pw *pw, struct gf_errbuf *eb)
{
	struct timespec until;
	pw_thread_loop_get_time(pw->loop, &until, (int64_t)CONNECT_MS * SPA_NSEC_PER_MSEC);
	while (!(pw->connected[0] && pw->connected[1]) && !atomic_load(&pw->lost))
		if (pw_thread_loop_timed_wait_full(pw->loop, &until) != 0)
			break;
	if (atomic_load(&pw->lost)) {
		gf_errbuf_set(eb, "%s", pw->why);
		return GF_E_AUDIO;
	}
	if (!(pw->connected[0] && pw->connected[1])) {
		gf_errbuf_set(eb, "the PipeWire server did not accept gpufir's streams within %d ms",
			      CONNECT_MS);
		return GF_E_AUDIO;
	}
	return 0;
}

static int connect_server(struct gf_live_pw *pw, struct gf_errbuf *eb)
{
	pw->loop = pw_thread_loop_new("gpufir-pw", NULL);
	pw->context = pw->loop ? pw_context_new(pw_thread_loop_get_loop(pw->loop), NULL, 0) : NULL;
	if (!pw->context || pw_thread_loop_start(pw->loop) < 0) {
		gf_errbuf_set(eb, "cannot start PipeWire's event thread: %s", strerror(errno));
		return GF_E_AUDIO;
	}
	pw_thread_loop_lock(pw->loop);
	int err = 0;
	pw->core = pw_context_connect(pw->context, NULL, 0);
	if (!pw->core) {
		const char *rt = getenv("PIPEWIRE_RUNTIME_DIR");
		gf_errbuf_set(eb,
			      "cannot connect to the PipeWire server: %s (is PipeWire running? socket in %s)",
			      strerror(errno),
			      rt			  ? rt
			      : getenv("XDG_RUNTIME_DIR") ? getenv("XDG_RUNTIME_DIR")
							  : "?");
		err = GF_E_AUDIO;
	} else {
		pw_core_add_listener(pw->core, &pw->core_listener, &core_events, pw);
		err = gf_live_pw_name_free(pw->loop, pw->core, pw->role[pw->sink ? 0 : 1].name,
					   pw->sink ? "input.device" : "output.device", CONNECT_MS, eb);
		if (!err)
			err = make_streams(pw, eb);
		if (!err)
			err = wait_connected(pw, eb);
	}
	pw_thread_loop_unlock(pw->loop);
	return err;
}

/* The direction the config asks for: PipeWire named on the input, a source (0); on the output
 * alone, a sink (1); the other side is gpufir's own node, so another host API there is refused,
 * and a name for it that struct pw_role cannot hold. */
static int direction(const struct gf_live_params *p, struct gf_errbuf *eb)
{
	int sink = !gf_live_pw_wanted(&p->input);
	const struct gf_live_endpoint *own = sink ? &p->input : &p->output;
	if (own->host_api && own->host_api[0] && !gf_live_pw_wanted(own)) {
		gf_errbuf_set(eb,
			      "%s.host_api = \"PipeWire\" %s gpufir's own PipeWire %s: %s.host_api = \"%s\" "
			      "cannot go with it (leave it out)",
			      sink ? "output" : "input", sink ? "takes its input from" : "plays to",
			      sink ? "sink" : "source", sink ? "input" : "output", own->host_api);
		return GF_E_CONFIG;
	}
	if (own->device && strlen(own->device) >= sizeof(((struct pw_role *)0)->name)) {
		gf_errbuf_set(eb, "%s.device: gpufir's PipeWire node.name is longer than %zu characters",
			      sink ? "input" : "output", sizeof(((struct pw_role *)0)->name) - 1);
		return GF_E_CONFIG;
	}
	return sink;
}

static const char *or_default(const char *name, const char *dflt)
{
	return name && name[0] ? name : dflt;
}

/* Each stream's name, description and class or target (struct pw_role), and the descriptions
 * the log and the status give. */
static void set_roles(struct gf_live_pw *pw, const struct gf_live_params *p)
{
	struct gf_live *l = pw->l;
	struct pw_role *in = &pw->role[0], *out = &pw->role[1];
	const struct gf_live_endpoint *dev = pw->sink ? &p->output : &p->input;
	const char *target = dev->device && dev->device[0] ? dev->device : NULL;
	struct pw_role *node = pw->sink ? in : out, *other = pw->sink ? out : in;
	snprintf(node->name, sizeof(node->name), "%s",
		 or_default(pw->sink ? p->input.device : p->output.device,
			    pw->sink ? "gpufir_speakers" : "gpufir_denoised"));
	node->desc = pw->sink ? "gpufir: denoised speakers" : "gpufir: denoised microphone";
	node->media_class = pw->sink ? "Audio/Sink" : "Audio/Source";
	snprintf(other->name, sizeof(other->name), "%s", pw->sink ? "gpufir_playback" : "gpufir_capture");
	other->desc = pw->sink ? "gpufir: speakers output" : "gpufir: microphone input";
	other->category = pw->sink ? "Playback" : "Capture";
	other->target = target;
	/* in_desc and out_desc are the same size. */
	char *devdesc = pw->sink ? l->out_desc : l->in_desc, *nodedesc = pw->sink ? l->in_desc : l->out_desc;
	snprintf(devdesc, sizeof(l->in_desc), "PipeWire %s%s%s", target ? "node '" : "default ",
		 target	    ? target
		 : pw->sink ? "sink"
			    : "source",
		 target ? "'" : "");
	snprintf(nodedesc, sizeof(l->in_desc), "PipeWire %s '%.150s'", pw->sink ? "sink" : "source",
		 node->name);
}

int gf_live_pw_open(struct gf_live *l, const struct gf_live_params *p, struct gf_errbuf *eb)
{
	/* Once per process and never undone: pw_deinit() would pull the
	 * library's state from under a later stream (the daemon reopens). */
	static int inited;
	if (!inited) {
		pw_init(NULL, NULL);
		inited = 1;
	}
	int sink = direction(p, eb);
	if (sink < 0)
		return sink;
	struct gf_live_pw *pw = calloc(1, sizeof(*pw));
	if (!pw)
		return GF_E_NOMEM;
	l->pw = pw;
	pw->l = l;
	pw->sink = sink;
	pw->lat_dir = sink ? SPA_DIRECTION_INPUT : SPA_DIRECTION_OUTPUT;
	pw->device = SPA_LATENCY_INFO(pw->lat_dir);
	pw->in_stride = l->channels * (uint32_t)sizeof(float);
	pw->out_stride = l->out_channels * (uint32_t)sizeof(float);
	pw->scratch_bytes = (size_t)GF_LIVE_MAX_PERIOD * pw->out_stride;
	/* Locked as the stream's buffers are (alloc_buffers): checked against what they left. */
	int err = gf_pinned_check(pw->scratch_bytes, "PipeWire's output buffer", eb);
	if (err)
		return err;
	if (!(pw->scratch = gf_pinned_alloc(pw->scratch_bytes))) {
		gf_errbuf_set(eb, "cannot allocate PipeWire's output buffer (%zu bytes)", pw->scratch_bytes);
		return GF_E_NOMEM;
	}
	set_roles(pw, p);
	err = connect_server(pw, eb);
	pw->role[0].target = pw->role[1].target = NULL; /* the config's: not kept */
	return err;
}

static void set_active(struct gf_live_pw *pw, bool on)
{
	pw_thread_loop_lock(pw->loop);
	pw_stream_set_active(pw->out, on);
	pw_stream_set_active(pw->in, on);
	pw_thread_loop_unlock(pw->loop);
}

int gf_live_pw_start(struct gf_live *l, struct gf_errbuf *eb)
{
	struct gf_live_pw *pw = l->pw;
	if (atomic_load_explicit(&pw->lost, memory_order_acquire)) {
		gf_errbuf_set(eb, "%s", pw->why);
		return GF_E_AUDIO;
	}
	set_active(pw, true);
	return 0;
}

void gf_live_pw_stop(struct gf_live *l)
{
	if (l->pw && l->pw->in && l->pw->out)
		set_active(l->pw, false);
}

void gf_live_pw_close(struct gf_live *l)
{
	struct gf_live_pw *pw = l->pw;
	if (!pw)
		return;
	if (pw->loop) {
		/* Destroying a stream takes it out of the data thread first: no
		 * callback runs after this, so the rings may go. */
		pw_thread_loop_lock(pw->loop);
		if (pw->in)
			pw_stream_destroy(pw->in);
		if (pw->out)
			pw_stream_destroy(pw->out);
		if (pw->core)
			pw_core_disconnect(pw->core);
		pw_thread_loop_unlock(pw->loop);
		pw_thread_loop_stop(pw->loop);
	}
	if (pw->context)
		pw_context_destroy(pw->context);
	if (pw->loop)
		pw_thread_loop_destroy(pw->loop);
	gf_pinned_free(pw->scratch, pw->scratch_bytes);
	free(pw);
	l->pw = NULL;
}

void gf_live_pw_latency(struct gf_live *l, uint32_t frames)
{
	struct gf_live_pw *pw = l->pw;
	pw_thread_loop_lock(pw->loop);
	if (frames && frames != pw->reported && !atomic_load(&pw->lost))
		publish_latency(pw, frames);
	pw_thread_loop_unlock(pw->loop);
}

const char *gf_live_pw_lost(struct gf_live *l, char *buf, size_t len)
{
	if (!atomic_load_explicit(&l->pw->lost, memory_order_acquire))
		return NULL;
	snprintf(buf, len, "%s", l->pw->why);
	return buf;
}

int gf_live_pw_idle(const struct gf_live *l)
{
	return !atomic_load_explicit(&l->pw->in_streaming, memory_order_acquire);
}
