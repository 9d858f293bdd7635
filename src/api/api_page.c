/* The control page the WebSocket's port serves at GET / (api_ws.c): plain
 * HTML and a little JavaScript, no external URL, compiled into the program.
 * It connects back to the WebSocket it came from and shows what the API
 * says: the state, the config file, the filters, a peak meter per capture and
 * playback channel (a level subscription every 100 ms), a volume slider, a
 * mute toggle, the noise suppressor's bypass toggle and depth slider (hidden
 * where none runs: GetSuppressor's channels 0), the neural stage's bypass
 * toggle and atten_lim_db slider (hidden where none runs: GetNeural's
 * channels 0), and the filters' response plot (GET /response.svg), fetched
 * again when the reload count changes. Nothing in its URL is read: a link or
 * a hidden frame of another site must not be able to act through it.
 * The state, the suppressor and the neural stage are asked again every second, and a subscription refused (no
 * stream yet) is asked again then too. A closed WebSocket is opened again
 * after 2 s.
 * Beyond loopback the daemon refuses a client every command until it sends
 * the control key: a refusal that asks for Authenticate shows a password
 * field, and the key typed there is sent as {"Authenticate": KEY} at once and
 * first on every (re)connect. The key lives in the page's memory and the
 * tab's sessionStorage (a reload of the tab keeps it, closing the tab drops
 * it), never in the URL, and a wrong key is forgotten.
 * Every value the page shows arrived in a reply; until then it shows "-".
 * The slider spans the volumes the daemon allows (GetStatus's volume_range),
 * the mute line says the state and its button the action, and a meter below
 * -150 dBFS (CamillaDSP sends -1000 for silence) says "silent". */
#include "api_internal.h"
#include "api_transport.h"

static const char page[] =
	"<!DOCTYPE html>\n"
	"<html><head><meta charset=\"utf-8\"><title>gpufir</title>\n"
	"<link rel=\"icon\" href=\"data:,\">\n"
	"<style>body{font-family:sans-serif;margin:1em}td{padding:0 .5em}\n"
	".bar{display:inline-block;height:.8em;background:#4a4;width:0}\n"
	".m{display:inline-block;width:12em;background:#ddd}</style></head>\n"
	"<body><h1>gpufir</h1>\n"
	"<table>\n"
	"<tr><td>connection</td><td id=\"conn\">connecting</td></tr>\n"
	"<tr><td>state</td><td id=\"state\">-</td></tr>\n"
	"<tr><td>config</td><td id=\"config\">-</td></tr>\n"
	"<tr><td>filters</td><td id=\"filters\">-</td></tr>\n"
	"<tr><td>volume</td><td><input id=\"vol\" type=\"range\" min=\"-120\" max=\"0\" step=\"0.5\" "
	"disabled>\n"
	" <span id=\"volume\">-</span> dB</td></tr>\n"
	"<tr><td>mute</td><td><span id=\"mute\">-</span> <button id=\"mutebtn\" disabled>-</button>"
	"</td></tr>\n"
	"<tr id=\"suprow\" hidden><td>suppressor</td><td><span id=\"sup\">-</span> "
	"<button id=\"supbtn\" disabled>-</button>\n"
	" depth <input id=\"depth\" type=\"range\" min=\"0\" max=\"40\" step=\"1\" disabled>\n"
	" <span id=\"depthdb\">-</span> dB</td></tr>\n"
	"<tr id=\"neurow\" hidden><td>neural stage</td><td><span id=\"neu\">-</span> "
	"<button id=\"neubtn\" disabled>-</button>\n"
	" limit <input id=\"atten\" type=\"range\" min=\"1\" max=\"100\" step=\"1\" disabled>\n"
	" <span id=\"attendb\">-</span> dB</td></tr>\n"
	"</table>\n"
	"<form id=\"keyform\" hidden>the control key is needed: "
	"<input id=\"key\" type=\"password\" autocomplete=\"off\"> <button>send</button> <span "
	"id=\"keywhy\"></span></form>\n"
	"<h2>capture peak</h2><div id=\"capture\" data-pushes=\"0\"></div>\n"
	"<h2>playback peak</h2><div id=\"playback\" data-pushes=\"0\"></div>\n"
	"<h2>response</h2><img id=\"plot\" alt=\"no response plot\" style=\"max-width:48em;width:100%\">\n"
	"<script>\n"
	"'use strict';\n"
	"var $ = function (id) { return document.getElementById(id); };\n"
	"var ws, key = null, muted = null, bypassed = null, nbypassed = null, pushes = 0, subscribed = "
	"false, reloads = null;\n"
	"try { key = sessionStorage.getItem('gpufir-key'); } catch (e) {}\n"
	"function keep(k) {\n"
	"  key = k;\n"
	"  try { if (k) sessionStorage.setItem('gpufir-key', k);\n"
	"    else sessionStorage.removeItem('gpufir-key'); } catch (e) {}\n"
	"}\n"
	"function send(c) { ws.send(JSON.stringify(c)); }\n"
	"function meters(el, peaks) {\n"
	"  el.textContent = '';\n"
	"  peaks.forEach(function (db, i) {\n"
	"    var row = document.createElement('div'), m = document.createElement('span');\n"
	"    var bar = document.createElement('span'), t = document.createElement('span');\n"
	"    m.className = 'm'; bar.className = 'bar';\n"
	"    bar.style.width = Math.max(0, Math.min(100, (db + 60) * 100 / 60)) + '%';\n"
	"    t.className = 'db';\n"
	"    t.textContent = ' ' + (i + 1) + ': ' + (db < -150 ? 'silent' : db.toFixed(1) + ' dBFS');\n"
	"    m.appendChild(bar); row.appendChild(m); row.appendChild(t); el.appendChild(row);\n"
	"  });\n"
	"  el.dataset.pushes = pushes;\n"
	"}\n"
	"var on = {\n"
	"  GetState: function (v) { $('state').textContent = v; },\n"
	"  GetCounters: function (v) {\n"
	"    if (v.reloads === reloads) return;\n"
	"    reloads = v.reloads;\n"
	"    $('plot').src = '/response.svg?reloads=' + reloads;\n"
	"    send('GetFilters'); send('GetStatus'); send('GetSuppressor'); send('GetNeural');\n"
	"  },\n"
	"  GetConfigFilePath: function (v) { $('config').textContent = v === null ? '(built-in)' : v; },\n"
	"  GetFilters: function (v) { $('filters').textContent = v.names.join(', ') +\n"
	"    ' (' + v.taps + ' taps, ' + v.backend + ')'; },\n"
	"  GetStatus: function (v) {\n"
	"    if (!v.volume_range) return;\n"
	"    $('vol').min = v.volume_range[0]; $('vol').max = v.volume_range[1];\n"
	"    $('vol').disabled = false; send('GetVolume');\n"
	"  },\n"
	"  GetVolume: function (v) { $('volume').textContent = v.toFixed(1); $('vol').value = v; },\n"
	"  SetVolume: function (v) { on.GetVolume(v); },\n"
	"  GetMute: function (v) {\n"
	"    muted = v; $('mute').textContent = v ? 'muted' : 'not muted';\n"
	"    $('mutebtn').textContent = v ? 'unmute' : 'mute'; $('mutebtn').disabled = false;\n"
	"  },\n"
	"  SetMute: function () { send('GetMute'); },\n"
	"  GetSuppressor: function (v) {\n"
	"    $('suprow').hidden = !v.channels; if (!v.channels) return;\n"
	"    bypassed = v.bypass; $('sup').textContent = v.bypass ? 'bypassed' : 'on';\n"
	"    $('supbtn').textContent = v.bypass ? 'turn on' : 'bypass'; $('supbtn').disabled = false;\n"
	"    $('depth').max = v.max_depth_db; $('depth').value = v.depth_db; $('depth').disabled = false;\n"
	"    $('depthdb').textContent = v.depth_db.toFixed(1);\n"
	"  },\n"
	"  SetSuppressor: function (v) { on.GetSuppressor(v); },\n"
	"  GetNeural: function (v) {\n"
	"    $('neurow').hidden = !v.channels; if (!v.channels) return;\n"
	"    nbypassed = v.bypass; $('neu').textContent = v.bypass ? 'bypassed' : 'on';\n"
	"    $('neubtn').textContent = v.bypass ? 'turn on' : 'bypass'; $('neubtn').disabled = false;\n"
	"    $('atten').max = v.max_atten_lim_db; $('atten').value = v.atten_lim_db;\n"
	"    $('atten').disabled = false; $('attendb').textContent = v.atten_lim_db.toFixed(1);\n"
	"  },\n"
	"  SetNeural: function (v) { on.GetNeural(v); },\n"
	"  SubscribeSignalLevels: function () { $('conn').textContent = 'open'; },\n"
	"  SignalLevelsEvent: function (v) {\n"
	"    pushes++; meters($('capture'), v.capture_peak); meters($('playback'), v.playback_peak); },\n"
	"};\n"
	"function start() {\n"
	"  reloads = null;\n"
	"  ['GetState', 'GetConfigFilePath', 'GetCounters', 'GetVolume', 'GetMute'].forEach(send);\n"
	"  send({SubscribeSignalLevels: 100});\n"
	"  subscribed = true;\n"
	"}\n"
	"on.Authenticate = function () {\n"
	"  $('keyform').hidden = true; $('keywhy').textContent = ''; start();\n"
	"};\n"
	"function refused(k, r) {\n"
	"  var why = String(r.value || r.error);\n"
	"  if (k === 'Authenticate') { keep(null); $('keywhy').textContent = why; }\n"
	"  var locked = r.result && r.result.InvalidRequestError && /Authenticate/.test(why);\n"
	"  if (k === 'Authenticate' || locked) $('keyform').hidden = false;\n"
	"  $('conn').textContent = k + ': ' + why;\n"
	"}\n"
	"function connect() {\n"
	"  ws = new WebSocket('ws://' + location.host + '/');\n"
	"  ws.onopen = function () {\n"
	"    $('conn').textContent = 'open';\n"
	"    if (key) send({Authenticate: key}); /* its Ok starts the rest */\n"
	"    else start();\n"
	"  };\n"
	"  ws.onclose = function () { $('conn').textContent = 'closed'; setTimeout(connect, 2000); };\n"
	"  ws.onmessage = function (e) {\n"
	"    var m = JSON.parse(e.data), k = Object.keys(m)[0], r = m[k];\n"
	"    if (k === 'SubscribeSignalLevels') subscribed = r.result === 'Ok';\n"
	"    if (r.result !== 'Ok') return refused(k, r);\n"
	"    if (on[k]) on[k](r.value);\n"
	"  };\n"
	"}\n"
	"connect();\n"
	"setInterval(function () {\n"
	"  if (ws.readyState !== 1) return;\n"
	"  send('GetState');\n"
	"  send('GetCounters');\n"
	"  send('GetSuppressor'); send('GetNeural'); /* another client may have changed them */\n"
	"  if (!subscribed) send({SubscribeSignalLevels: 100});\n"
	"}, 1000);\n"
	"$('vol').onchange = function () { send({SetVolume: parseFloat(this.value)}); };\n"
	"$('mutebtn').onclick = function () { if (muted !== null) send({SetMute: !muted}); };\n"
	"$('supbtn').onclick = function () {\n"
	"  if (bypassed !== null) send({SetSuppressor: {bypass: !bypassed}}); };\n"
	"$('depth').onchange = function () {\n"
	"  send({SetSuppressor: {depth_db: parseFloat(this.value)}}); };\n"
	"$('neubtn').onclick = function () {\n"
	"  if (nbypassed !== null) send({SetNeural: {bypass: !nbypassed}}); };\n"
	"$('atten').onchange = function () {\n"
	"  send({SetNeural: {atten_lim_db: parseFloat(this.value)}}); };\n"
	"$('keyform').onsubmit = function (e) {\n"
	"  e.preventDefault();\n"
	"  keep($('key').value); $('key').value = '';\n"
	"  if (key && ws.readyState === 1) send({Authenticate: key});\n"
	"};\n"
	"</script></body></html>\n";

const char *gf_api_page(size_t *len)
{
	*len = sizeof(page) - 1;
	return page;
}

const char *gf_api_response_svg(struct gf_api *a, size_t *len)
{
	return a->ops.response_svg ? a->ops.response_svg(a->ops.ctx, len) : NULL;
}
