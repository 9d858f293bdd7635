#define _GNU_SOURCE
#include "jackplay.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <jack/jack.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void quiet(const char *msg)
{
	(void)msg;
}

/* ---- server ------------------------------------------------------------ */

static int server_accepts(const char *name)
{
	jack_status_t st;
	jack_client_t *c = jack_client_open("gftest_probe", JackNoStartServer | JackServerName, &st, name);
	if (!c)
		return 0;
	jack_client_close(c);
	return 1;
}

/* Claim the server name @p name for this process: an exclusive lock on a file named for it, held
 * until the process exits (a crashed test frees its names too). Tests run side by side
 * in lanes, and two of them starting servers of one name at the same moment would both see a
 * server answer under it, one of them the other's. @return the lock's descriptor, or -1 where
 * another process holds the name (or the file cannot be opened). */
static int claim_name(const char *name)
{
	const char *tmp = getenv("TMPDIR");
	char path[256];
	snprintf(path, sizeof(path), "%s/gpufir-jackd-%s.lock", tmp && *tmp ? tmp : "/tmp", name);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Start one server named @p name (claimed: s->lock_fd). @return 0, 1 if it exited at once
 * (registry full, jackd missing: message printed), -1 if it never answered. */
static int start_named(struct gf_jack_server *s, const char *name, uint32_t rate, uint32_t period,
		       uint32_t capture, uint32_t ports)
{
	int lock_fd = s->lock_fd;
	memset(s, 0, sizeof(*s));
	s->lock_fd = lock_fd;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->ports = ports;
	s->capture_ports = capture;
	char r[16], p[16], c[16], n[16];
	snprintf(r, sizeof(r), "%u", rate);
	snprintf(p, sizeof(p), "%u", period);
	snprintf(c, sizeof(c), "%u", capture);
	snprintf(n, sizeof(n), "%u", ports);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM); /* never outlive a test that was killed */
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0) {
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		execlp("jackd", "jackd", "-n", s->name, "-S", "-R", "-d", "dummy", "-r", r, "-p", p, "-C", c,
		       "-P", n, (char *)NULL);
		_exit(127);
	}
	s->pid = pid;
	for (int i = 0; i < 200; i++) {
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			s->pid = 0;
			fprintf(stderr, "jackd -n %s exited at start (status %d)%s\n", name, status,
				WIFEXITED(status) && WEXITSTATUS(status) == 127 ? ": jackd not installed?"
										: "");
			return 1;
		}
		if (server_accepts(s->name))
			return 0;
		sleep_ms(50);
	}
	fprintf(stderr, "jackd -n %s did not accept clients within 10 s\n", s->name);
	gf_jack_server_stop(s, SIGTERM);
	return -1;
}

int gf_jack_server_start(struct gf_jack_server *s, const char *prefix, uint32_t rate, uint32_t period)
{
	return gf_jack_server_start_ports(s, prefix, rate, period, 2);
}

int gf_jack_server_start_ports(struct gf_jack_server *s, const char *prefix, uint32_t rate, uint32_t period,
			       uint32_t ports)
{
	return gf_jack_server_start_io(s, prefix, rate, period, ports, ports);
}

int gf_jack_server_start_io(struct gf_jack_server *s, const char *prefix, uint32_t rate, uint32_t period,
			    uint32_t capture, uint32_t playback)
{
	jack_set_error_function(quiet); /* "cannot connect" while it starts */
	jack_set_info_function(quiet);
	/* A few fixed names, not one per process: JACK's registry has room for 8
	 * servers and only a server of the same name reclaims the entry of one
	 * that died without cleaning up. A name in use makes jackd exit: try the next. */
	for (int i = 0; i < 4; i++) {
		char name[64];
		snprintf(name, sizeof(name), "%s-%d", prefix, i);
		s->lock_fd = claim_name(name);
		if (s->lock_fd < 0)
			continue; /* another test's */
		int r = start_named(s, name, rate, period, capture, playback);
		if (r == 0) {
			setenv("JACK_DEFAULT_SERVER", s->name, 1);
			setenv("JACK_NO_START_SERVER", "1", 1);
			return 0;
		}
		close(s->lock_fd);
		s->lock_fd = -1;
		if (r < 0)
			return -1;
	}
	fprintf(stderr, "jackd: no free server name %s-0..3\n", prefix);
	return -1;
}

int gf_jack_server_restart(struct gf_jack_server *s, uint32_t rate, uint32_t period)
{
	char name[sizeof(s->name)];
	snprintf(name, sizeof(name), "%s", s->name);
	return start_named(s, name, rate, period, s->capture_ports, s->ports) == 0 ? 0 : -1;
}

void gf_jack_server_stop(struct gf_jack_server *s, int sig)
{
	if (s->pid > 0) {
		kill(s->pid, sig);
		int status, i;
		for (i = 0; i < 100 && waitpid(s->pid, &status, WNOHANG) == 0; i++)
			sleep_ms(50);
		if (i == 100) {
			kill(s->pid, SIGKILL);
			waitpid(s->pid, &status, 0);
		}
		s->pid = 0;
	}
	/* Only this server's files: others may be running. */
	char pat[2][128];
	snprintf(pat[0], sizeof(pat[0]), "/dev/shm/jack_%s_*", s->name);
	snprintf(pat[1], sizeof(pat[1]), "/dev/shm/jack_sem.*_%s_*", s->name);
	for (int k = 0; k < 2; k++) {
		glob_t g;
		if (glob(pat[k], 0, NULL, &g) == 0)
			for (size_t i = 0; i < g.gl_pathc; i++)
				unlink(g.gl_pathv[i]);
		globfree(&g);
	}
}

/* ---- rig --------------------------------------------------------------- */

struct gf_jack_rig {
	jack_client_t *pc, *rc;
	jack_port_t *out[GF_JACK_MAX_CH], *in[GF_JACK_MAX_CH];
	uint32_t channels;

	/* player; signal/frames/hook are set before `playing` is released */
	const float *signal;
	uint32_t frames, pos;
	void (*hook)(void *);
	void *arg;
	atomic_int playing; /* 0 idle, 1 armed, 2 running, 3 done */
	_Atomic uint32_t play_time;

	/* recorder */
	float *buf;
	uint32_t cap;
	_Atomic uint32_t rec_frames;
	atomic_int recording; /* 0 idle, 1 armed, 2 running */
	_Atomic uint32_t rec_time;

	atomic_uint xruns;

	/* Each client's cycles while playing / recording: (frame time, frames),
	 * to tell a cycle a client missed from a wrong signal (gf_jack_rig_cycle_gaps). */
	struct gf_jack_cycles play_cyc, rec_cyc;
};

#define CYCLES_MAX 65536 /* 22 s of 16-frame cycles, 87 s at 64 */

static void note_cycle(struct gf_jack_cycles *c, jack_client_t *client, jack_nframes_t n)
{
	uint32_t k = atomic_load_explicit(&c->count, memory_order_relaxed);
	if (k >= c->cap)
		return;
	c->time[k] = jack_last_frame_time(client);
	c->frames[k] = n;
	atomic_store_explicit(&c->count, k + 1, memory_order_release);
}

static int play_process(jack_nframes_t n, void *arg)
{
	struct gf_jack_rig *r = arg;
	float *o[GF_JACK_MAX_CH];
	for (uint32_t c = 0; c < r->channels; c++) {
		o[c] = jack_port_get_buffer(r->out[c], n);
		memset(o[c], 0, n * sizeof(float));
	}
	int st = atomic_load_explicit(&r->playing, memory_order_acquire);
	if (st == 1) {
		atomic_store(&r->play_time, jack_last_frame_time(r->pc));
		if (r->hook)
			r->hook(r->arg);
		atomic_store(&r->playing, st = 2);
	}
	if (st != 2)
		return 0;
	note_cycle(&r->play_cyc, r->pc, n);
	uint32_t k = r->frames - r->pos < n ? r->frames - r->pos : n;
	for (uint32_t i = 0; i < k; i++)
		for (uint32_t c = 0; c < r->channels; c++)
			o[c][i] = r->signal[(size_t)(r->pos + i) * r->channels + c];
	r->pos += k;
	if (r->pos == r->frames)
		atomic_store(&r->playing, 3);
	return 0;
}

static int rec_process(jack_nframes_t n, void *arg)
{
	struct gf_jack_rig *r = arg;
	int st = atomic_load_explicit(&r->recording, memory_order_acquire);
	if (st == 1) {
		atomic_store(&r->rec_time, jack_last_frame_time(r->rc));
		atomic_store(&r->recording, st = 2);
	}
	if (st != 2)
		return 0;
	note_cycle(&r->rec_cyc, r->rc, n);
	uint32_t have = atomic_load_explicit(&r->rec_frames, memory_order_relaxed);
	uint32_t k = r->cap - have < n ? r->cap - have : n;
	for (uint32_t c = 0; c < r->channels; c++) {
		const float *in = jack_port_get_buffer(r->in[c], n);
		for (uint32_t i = 0; i < k; i++)
			r->buf[(size_t)(have + i) * r->channels + c] = in[i];
	}
	atomic_store_explicit(&r->rec_frames, have + k, memory_order_release);
	return 0;
}

static int on_xrun(void *arg)
{
	struct gf_jack_rig *r = arg;
	atomic_fetch_add(&r->xruns, 1);
	return 0;
}

static jack_client_t *open_client(const char *name, struct gf_jack_rig *r, JackProcessCallback cb, int xruns)
{
	jack_status_t st;
	jack_client_t *c = jack_client_open(name, JackNoStartServer, &st);
	if (!c) {
		fprintf(stderr, "jack_client_open(%s) failed, status 0x%x\n", name, (unsigned)st);
		return NULL;
	}
	jack_set_process_callback(c, cb, r);
	if (xruns)
		jack_set_xrun_callback(c, on_xrun, r);
	return c;
}

struct gf_jack_rig *gf_jack_rig_open(uint32_t channels, uint32_t rec_frames)
{
	if (channels < 1 || channels > GF_JACK_MAX_CH)
		return NULL;
	struct gf_jack_rig *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->channels = channels;
	r->cap = rec_frames;
	r->buf = calloc((size_t)rec_frames * channels, sizeof(float));
	struct gf_jack_cycles *cyc[2] = {&r->play_cyc, &r->rec_cyc};
	for (int i = 0; i < 2; i++) {
		cyc[i]->cap = CYCLES_MAX;
		cyc[i]->time = calloc(CYCLES_MAX, sizeof(uint32_t));
		cyc[i]->frames = calloc(CYCLES_MAX, sizeof(uint32_t));
		if (!cyc[i]->time || !cyc[i]->frames)
			goto fail;
	}
	r->pc = open_client("gftest_play", r, play_process, 1);
	r->rc = open_client("gftest_rec", r, rec_process, 0);
	if (!r->buf || !r->pc || !r->rc)
		goto fail;
	for (uint32_t c = 0; c < channels; c++) {
		char name[32];
		snprintf(name, sizeof(name), "out_%u", c + 1);
		r->out[c] = jack_port_register(r->pc, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
		snprintf(name, sizeof(name), "in_%u", c + 1);
		r->in[c] = jack_port_register(r->rc, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
		if (!r->out[c] || !r->in[c])
			goto fail;
	}
	if (jack_activate(r->pc) || jack_activate(r->rc))
		goto fail;
	return r;
fail:
	fprintf(stderr, "cannot set up the JACK test clients\n");
	gf_jack_rig_close(r);
	return NULL;
}

void gf_jack_rig_close(struct gf_jack_rig *r)
{
	if (!r)
		return;
	if (r->pc)
		jack_client_close(r->pc);
	if (r->rc)
		jack_client_close(r->rc);
	free(r->buf);
	free(r->play_cyc.time);
	free(r->play_cyc.frames);
	free(r->rec_cyc.time);
	free(r->rec_cyc.frames);
	free(r);
}

/* Disconnect every connection of @p port. */
static void disconnect_all(jack_client_t *c, const char *port)
{
	jack_port_t *p = jack_port_by_name(c, port);
	const char **peers = p ? jack_port_get_all_connections(c, p) : NULL;
	for (int i = 0; peers && peers[i]; i++) {
		if (jack_port_flags(p) & JackPortIsInput)
			jack_disconnect(c, peers[i], port);
		else
			jack_disconnect(c, port, peers[i]);
	}
	jack_free(peers);
}

int gf_jack_rig_connect(struct gf_jack_rig *r, const char *client, int to_recorder)
{
	char pat[128];
	snprintf(pat, sizeof(pat), "^%s[^:]*:", client);
	const char **ins = jack_get_ports(r->pc, pat, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput);
	const char **outs = jack_get_ports(r->pc, pat, JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput);
	uint32_t nin = 0, nout = 0;
	while (ins && ins[nin])
		nin++;
	while (outs && outs[nout])
		nout++;
	int err = 0;
	if (nin < r->channels || (to_recorder && nout < r->channels)) {
		fprintf(stderr, "JACK client %s has %u inputs and %u outputs; %u needed\n", client, nin, nout,
			r->channels);
		err = -1;
	}
	for (uint32_t c = 0; !err && c < r->channels; c++) {
		disconnect_all(r->pc, ins[c]);
		err |= jack_connect(r->pc, jack_port_name(r->out[c]), ins[c]);
		if (c < nout)
			disconnect_all(r->pc, outs[c]);
		if (to_recorder)
			err |= jack_connect(r->pc, outs[c], jack_port_name(r->in[c]));
		if (err)
			fprintf(stderr, "cannot connect the test clients to %s\n", client);
	}
	jack_free(ins);
	jack_free(outs);
	return err ? -1 : 0;
}

void gf_jack_rig_record(struct gf_jack_rig *r)
{
	atomic_store(&r->rec_frames, 0);
	atomic_store(&r->rec_cyc.count, 0);
	atomic_store_explicit(&r->recording, 1, memory_order_release);
}

void gf_jack_rig_play(struct gf_jack_rig *r, const float *signal, uint32_t frames, void (*hook)(void *),
		      void *arg)
{
	r->signal = signal;
	r->frames = frames;
	r->pos = 0;
	atomic_store(&r->play_cyc.count, 0);
	r->hook = hook;
	r->arg = arg;
	atomic_store_explicit(&r->playing, 1, memory_order_release);
}

int gf_jack_rig_played(const struct gf_jack_rig *r)
{
	return atomic_load(&r->playing) == 3;
}

uint32_t gf_jack_rig_stop_recording(struct gf_jack_rig *r, const float **out)
{
	atomic_store(&r->recording, 0);
	sleep_ms(50); /* let a running cycle finish */
	*out = r->buf;
	return atomic_load_explicit(&r->rec_frames, memory_order_acquire);
}

uint32_t gf_jack_rig_play_time(const struct gf_jack_rig *r)
{
	return atomic_load(&r->play_time);
}

uint32_t gf_jack_rig_record_time(const struct gf_jack_rig *r)
{
	return atomic_load(&r->rec_time);
}

uint32_t gf_jack_rig_xruns(const struct gf_jack_rig *r)
{
	return atomic_load(&r->xruns);
}

uint32_t gf_jack_rig_period(const struct gf_jack_rig *r)
{
	return jack_get_buffer_size(r->pc);
}

const struct gf_jack_cycles *gf_jack_rig_cycles(const struct gf_jack_rig *r, int recorder)
{
	return recorder ? &r->rec_cyc : &r->play_cyc;
}

uint32_t gf_jack_rig_cycle_gaps(const struct gf_jack_rig *r, int recorder, FILE *log)
{
	const struct gf_jack_cycles *c = gf_jack_rig_cycles(r, recorder);
	uint32_t n = atomic_load_explicit(&c->count, memory_order_acquire), gaps = 0, pos = 0;
	for (uint32_t k = 1; k < n; k++) {
		pos += c->frames[k - 1];
		int32_t d = (int32_t)(c->time[k] - c->time[k - 1] - c->frames[k - 1]);
		if (d == 0)
			continue;
		if (log && gaps < 10)
			fprintf(log,
				"%s: cycle %u (its frame %u): frame time %u, %d frames %s the previous "
				"cycle's end (%u frames then %u)\n",
				recorder ? "recorder" : "player", k, pos, c->time[k], d < 0 ? -d : d,
				d > 0 ? "after" : "before", c->frames[k - 1], c->frames[k]);
		gaps++;
	}
	return gaps;
}
