/* Plain HTTP on the WebSocket's port (api_ws.c's connections before any
 * upgrade): the control page at GET / (api_page.c), the running filters'
 * response plot at GET /response.svg, a 404 or 405 elsewhere, never a file;
 * and, for every request and upgrade, the Host and Origin rules of
 * api_origin.c, whose refusal comes before anything is served or run. */
#include <stdlib.h>
#include <string.h>

#include "api_ws_internal.h"
#include "clock.h"
#include "log.h"

/* A request header's value in @p buf: NULL when absent, "" when too long to be right. */
static const char *header(struct lws *wsi, enum lws_token_indexes t, char *buf, int size)
{
	if (lws_hdr_total_length(wsi, t) <= 0)
		return NULL;
	if (lws_hdr_copy(wsi, buf, size, t) < 0)
		buf[0] = '\0';
	return buf;
}

/* A request from a browser that may not use this port: Host names another site (DNS rebinding:
 * 421), or a WebSocket's Origin is a page of another site or port (403). Answered, then closed:
 * a refused page gets no second try on the same connection. @return 0 when it may go on */
int gf_api_ws_refused(struct wclient *c, struct lws *wsi, int upgrade)
{
	char buf[300];
	if (!gf_api_host_ok(&c->w->rules, header(wsi, WSI_TOKEN_HOST, buf, sizeof(buf)))) {
		gf_debug("control WebSocket: a request for another Host refused (DNS rebinding?)");
		lws_return_http_status(wsi, 421, "Host is not this daemon (docs/api.md, Who may connect)");
		return -1;
	}
	if (upgrade && !gf_api_origin_ok(&c->w->rules, header(wsi, WSI_TOKEN_ORIGIN, buf, sizeof(buf)))) {
		gf_debug("control WebSocket: a page of another origin refused");
		lws_return_http_status(wsi, HTTP_STATUS_FORBIDDEN,
				       "This origin may not use the control API (control_allowed_origins)");
		return -1;
	}
	return 0;
}

/* An HTTP request was answered: the connection has GF_API_HANDSHAKE_MS for its next one. */
static int http_done(struct wclient *c, struct lws *wsi)
{
	c->since_ms = gf_now_ms();
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* Plain HTTP on the WebSocket's port: GET / is the page (api_page.c), GET /response.svg the
 * running filters' response (the daemon's, drawn at its build); any other path or method gets a
 * 404 or 405. The body is copied now, so that a reload before the socket is writable cannot
 * change it under the Content-Length already sent. */
int gf_api_ws_on_http(struct wclient *c, struct lws *wsi, const char *uri)
{
	if (gf_api_ws_refused(c, wsi, 0))
		return -1;
	c->since_ms = gf_now_ms(); /* the answer is to be taken within GF_API_HANDSHAKE_MS too */
	int get = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0;
	const char *body = NULL, *type = NULL;
	size_t len = 0;
	if (get && strcmp(uri, "/") == 0) {
		body = gf_api_page(&len);
		type = "text/html; charset=utf-8";
	} else if (get && strcmp(uri, "/response.svg") == 0) {
		body = gf_api_response_svg(c->w->a, &len);
		type = "image/svg+xml";
	}
	if (!body) {
		lws_return_http_status(wsi, get ? HTTP_STATUS_NOT_FOUND : HTTP_STATUS_METHOD_NOT_ALLOWED,
				       NULL);
		return http_done(c, wsi);
	}
	/* lws_write wants LWS_PRE bytes of room before what it sends; it keeps what the
	 * socket does not take and sends it as the socket drains. */
	free(c->body); /* lws starts a request once the previous one completed: none is left */
	if (!(c->body = malloc(LWS_PRE + len)))
		return -1;
	memcpy(c->body + LWS_PRE, body, len);
	c->body_len = len;
	unsigned char buf[LWS_PRE + 512], *start = buf + LWS_PRE, *p = start, *end = buf + sizeof(buf) - 1;
	static const char nostore[] = "no-store";
	if (lws_add_http_common_headers(wsi, HTTP_STATUS_OK, type, len, &p, end) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL, (const unsigned char *)nostore,
					 sizeof(nostore) - 1, &p, end) ||
	    lws_finalize_write_http_header(wsi, start, &p, end))
		return -1;
	lws_callback_on_writable(wsi);
	return 0;
}

int gf_api_ws_on_http_writable(struct wclient *c, struct lws *wsi)
{
	if (!c->body)
		return 0;
	unsigned char *b = c->body;
	size_t len = c->body_len;
	c->body = NULL;
	int w = lws_write(wsi, b + LWS_PRE, len, LWS_WRITE_HTTP_FINAL);
	free(b);
	if (w != (int)len)
		return -1;
	return http_done(c, wsi);
}
