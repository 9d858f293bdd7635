/* Whether gpufir's PipeWire node may take its name (live_pipewire_name.h):
 * the registry's nodes of that name and the processes of their clients, read
 * up to a core sync's answer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <spa/utils/result.h>

#include "live_pipewire_name.h"

#define MAX_NAMED 16	/* nodes of the one name remembered */
#define MAX_CLIENTS 256 /* clients of the graph remembered (a desktop has a few dozen) */

struct lookup {
	struct pw_thread_loop *loop;
	const char *name;
	uint32_t named[MAX_NAMED]; /* client.id of each node named so */
	uint32_t n_named;
	uint32_t client[MAX_CLIENTS], pid[MAX_CLIENTS]; /* each client and its process (0: unknown) */
	uint32_t n_clients;
	int seq, done;
};

static uint32_t dict_u32(const struct spa_dict *props, const char *key)
{
	const char *v = props ? spa_dict_lookup(props, key) : NULL;
	return v ? (uint32_t)strtoul(v, NULL, 10) : 0;
}

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
		      const struct spa_dict *props)
{
	struct lookup *lk = data;
	(void)permissions;
	(void)version;
	if (strcmp(type, PW_TYPE_INTERFACE_Client) == 0 && lk->n_clients < MAX_CLIENTS) {
		lk->client[lk->n_clients] = id;
		lk->pid[lk->n_clients++] = dict_u32(props, PW_KEY_SEC_PID);
	} else if (strcmp(type, PW_TYPE_INTERFACE_Node) == 0 && props && lk->n_named < MAX_NAMED) {
		const char *name = spa_dict_lookup(props, PW_KEY_NODE_NAME);
		if (name && strcmp(name, lk->name) == 0)
			lk->named[lk->n_named++] = dict_u32(props, PW_KEY_CLIENT_ID);
	}
}

static void on_done(void *data, uint32_t id, int seq)
{
	struct lookup *lk = data;
	if (id == PW_ID_CORE && seq == lk->seq) {
		lk->done = 1;
		pw_thread_loop_signal(lk->loop, false);
	}
}

static const struct pw_registry_events registry_events = {
	PW_VERSION_REGISTRY_EVENTS,
	.global = on_global,
};

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	.done = on_done,
};

/* The process of the first node named so that is not this one's; 0 when none. -1: unknown. */
static long other_process(const struct lookup *lk)
{
	for (uint32_t i = 0; i < lk->n_named; i++) {
		long pid = -1;
		for (uint32_t c = 0; c < lk->n_clients; c++)
			if (lk->client[c] == lk->named[i] && lk->pid[c])
				pid = lk->pid[c];
		if (pid != (long)getpid())
			return pid;
	}
	return 0;
}

int gf_live_pw_name_free(struct pw_thread_loop *loop, struct pw_core *core, const char *name,
			 const char *setting, int timeout_ms, struct gf_errbuf *eb)
{
	struct lookup lk = {.loop = loop, .name = name};
	struct spa_hook core_listener, registry_listener;
	struct pw_registry *reg = pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
	if (!reg) {
		gf_errbuf_set(eb, "cannot read the PipeWire graph's nodes: %s", strerror(errno));
		return GF_E_AUDIO;
	}
	spa_zero(core_listener);
	spa_zero(registry_listener);
	pw_registry_add_listener(reg, &registry_listener, &registry_events, &lk);
	pw_core_add_listener(core, &core_listener, &core_events, &lk);
	lk.seq = pw_core_sync(core, PW_ID_CORE, 0);
	struct timespec until;
	pw_thread_loop_get_time(loop, &until, (int64_t)timeout_ms * SPA_NSEC_PER_MSEC);
	while (!lk.done && pw_thread_loop_timed_wait_full(loop, &until) == 0)
		;
	spa_hook_remove(&core_listener);
	spa_hook_remove(&registry_listener);
	pw_proxy_destroy((struct pw_proxy *)reg);
	if (!lk.done) {
		gf_errbuf_set(eb, "the PipeWire server did not list its nodes within %d ms", timeout_ms);
		return GF_E_AUDIO;
	}
	long pid = other_process(&lk);
	if (!pid)
		return 0;
	char who[48] = "another process";
	if (pid > 0)
		snprintf(who, sizeof(who), "process %ld", pid);
	gf_errbuf_set(eb,
		      "PipeWire has a node named '%s' already, of %s (another gpufir daemon with the same "
		      "config?): give this one another name (%s)",
		      name, who, setting);
	return GF_E_CONFIG;
}
