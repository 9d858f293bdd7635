/* live_pipewire_name.c: whether a node name is free in the PipeWire graph
 * (docs/live.md, "Native PipeWire"). Private to the PipeWire host. */
#ifndef GF_LIVE_PIPEWIRE_NAME_H
#define GF_LIVE_PIPEWIRE_NAME_H

#include <pipewire/pipewire.h>

#include "error.h"

/**
 * Whether a node of another process is named @p name. PipeWire lets two
 * nodes share a name, but a client that targets one by name gets either, so
 * gpufir's node takes a name only while it is free; nodes of this process (a
 * stream reopened before the server removed the old one) do not count.
 * Control thread, with @p loop locked; waits for the server's answer, at most
 * @p timeout_ms. @p setting names the config's setting for the message.
 * @return 0 (free), GF_E_CONFIG (taken: why in @p eb) or GF_E_AUDIO (no answer)
 */
int gf_live_pw_name_free(struct pw_thread_loop *loop, struct pw_core *core, const char *name,
			 const char *setting, int timeout_ms, struct gf_errbuf *eb);

#endif
