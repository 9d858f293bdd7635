#!/usr/bin/env python3
"""gpufir as a native PipeWire node under a private headless PipeWire (CTest:
test_daemon_pipewire_CASE, run by scripts/with-pipewire.sh with two stand-in
microphones, gf-mic-a (the default source) and gf-mic-b, and pipewire-pulse).

The daemon runs config/examples/desktop-mic.conf (the built-in denoise chain,
input.host_api = "PipeWire"). Noisy speech (espeak-ng speech, hiss and mains
hum) is played into the default stand-in microphone; what gpufir's source
gives is recorded and scored against the clean speech (SI-SDR).

Cases:
  record   the node gpufir_denoised appears with its properties, its capture
           is linked to the default source; pw-record --target gpufir_denoised
           and a PulseAudio client (parecord -d gpufir_denoised) record speech
           whose SI-SDR beats the noisy input's; the microphone and gpufir's
           source recorded side by side in one client (both into the null
           sink, its monitor recorded) give the latency the node adds, and
           the graph is told it: gpufir_denoised's ports carry one quantum
           plus total_latency_frames as their capture latency (pw-dump), and
           after a reload to a chain without the suppressor, the new figure.
  follow   the default source switched to gf-mic-b: the capture follows it,
           and speech played there comes out; gf-mic-b unplugged (its node
           destroyed) and plugged in again: the capture falls back to gf-mic-a
           and returns to gf-mic-b, while gpufir's source stays the same node.
  restart  PipeWire killed and started again (with-pipewire.sh --restart): the
           same gpufir process reconnects, its source appears again, and
           speech recorded from it is denoised as before.
  controls white noise is played into the default microphone; the suppressor
           learns it and cuts it by its depth (15 dB). While pw-record records
           gpufir's source, SetSuppressor (control socket) toggles bypass and
           changes the depth seven times. On the recording, at each change:
           the noise's level moves to the new depth's, by a median of at most
           RAMP_SHARE_MEDIAN of the way in any 10 ms (the suppressor's 30 ms
           ramp; cut to one frame, it moves within one 12 ms hop), and no
           sample steps further from the last than 1.2 times the input's
           largest step (no click); over all of it no run of zeros (dropout),
           gpufir's xrun and underflow counters unchanged (device_xruns, the
           graph cycles missed, included) and the stream not reopened.
  speakers gpufir as denoised speakers (desktop-speakers.conf): its sink gpufir_speakers appears
           with its properties, its playback is linked to the default sink (a null sink); a
           second daemon of the same config stops (exit status 6): the name is taken;
           pw-play --target gpufir_speakers plays noisy speech, and the default sink's monitor,
           recorded, beats the input's SI-SDR; the default sink switched to a second null sink:
           the playback follows, and a PulseAudio client (paplay -d gpufir_speakers) is heard
           there, denoised; that sink unplugged and plugged in again: the playback falls
           back and returns, the sink the same node; the stand-in microphone linked into the sink and beside gpufir's
           playback gives the latency the sink adds, and the sink's input ports carry it (one
           quantum plus total_latency_frames, on the default sink's own) as playback latency.
  xrun     gpufir stopped (SIGSTOP) for 0.3 s while the tone plays into its
           capture: the graph runs cycles without it, which device_xruns
           counts; it counted at most a few in the second before. Before the
           stop, the tone (in noise 20 dB under it), which the capture hears
           after digital silence, is cut by about the suppressor's depth once
           its longer minimum has seen it (from 3.2 s into the tone).

Usage: test_daemon_pipewire.py GPUFIR CASE. Exit 77 (skipped) without the
tools (espeak-ng, sox, pw-record, pw-play, pw-link, pw-dump, parecord, paplay) or
outside with-pipewire.sh.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
try:
    import numpy as np
    import denoise_eval as de  # speech(), hum(), scale_to(), read_wav(), write_wav()
except ImportError:
    print("SKIP: numpy is needed")
    sys.exit(77)

RATE = 48000
MIC_A, MIC_B = "gf-mic-a", "gf-mic-b"
NODE = "gpufir_denoised"
MIN_GAIN_DB = 1.5  # SI-SDR gpufir's output must win over the microphone's


DAEMONS = []  # killed on a failure


def die(msg, log=None):
    print("FAIL: " + msg)
    for p in DAEMONS:
        if p.poll() is None:
            p.kill()
    if log:
        print("(recordings and log kept in %s)" % os.path.dirname(log))
    if log and os.path.exists(log):
        with open(log) as f:
            print("--- gpufir log (tail) ---\n" + "".join(f.readlines()[-30:]))
    sys.exit(1)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30, **kw)


def nodes():
    """node.name -> (id, props) of the graph's nodes, and the links as (out node, in node)."""
    r = run(["pw-dump"])
    try:
        objs = json.loads(r.stdout or "[]")
    except json.JSONDecodeError:
        return {}, []
    byname, links = {}, []
    for o in objs:
        info = o.get("info") or {}
        if o.get("type") == "PipeWire:Interface:Node":
            props = info.get("props") or {}
            byname[props.get("node.name")] = (o["id"], props)
        elif o.get("type") == "PipeWire:Interface:Link":
            links.append((info.get("output-node-id"), info.get("input-node-id")))
    return byname, links


def wait_for(what, pred, timeout, log):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.2)
    die("timed out after %.0f s waiting for %s" % (timeout, what), log)


def peer(name, upstream):
    """The node linked into (@p upstream) or from node @p name (its name), or None."""
    byname, links = nodes()
    if name not in byname:
        return None
    me = byname[name][0]
    names = {v[0]: k for k, v in byname.items()}
    other = [names.get(o if upstream else i) for o, i in links if (i if upstream else o) == me]
    return other[0] if other else None


def capture_source():
    """The node gpufir's capture stream is linked from (its name), or None."""
    return peer("gpufir_capture", True)


def links_from(name):
    """How many links leave the node @p name."""
    byname, links = nodes()
    if name not in byname:
        return 0
    return len({i for o, i in links if o == byname[name][0]})


def make_material(tmp):
    """Clean speech after 1.5 s of noise alone (the suppressor learns it), and the noisy mix."""
    rng = np.random.default_rng(7)
    s = de.speech(tmp)
    s = np.concatenate([np.zeros(int(1.5 * RATE)), s, np.zeros(RATE // 2)])
    noise = de.scale_to(rng.standard_normal(len(s)), -30.0) + 0.2 * de.hum(len(s), 50.0, rng)
    x = s + noise
    path = os.path.join(tmp, "noisy.wav")
    de.write_wav(path, x)
    return s, path


def lag_of(y, ref, max_lag):
    """The lag (0..max_lag frames) at which y best matches ref."""
    n = len(y) + len(ref)
    nfft = 1 << (n - 1).bit_length()
    xc = np.fft.irfft(np.fft.rfft(y, nfft) * np.conj(np.fft.rfft(ref, nfft)), nfft)
    return int(np.argmax(xc[:max_lag + 1]))


def si_sdr(ref, est):
    a = np.dot(est, ref) / np.dot(ref, ref)
    e = est - a * ref
    return 10 * np.log10(np.dot(a * ref, a * ref) / max(np.dot(e, e), 1e-20))


def score(rec, s, what, log):
    """SI-SDR of a recording against the clean speech: the median over the windows of speech, each
    aligned on its own, the search following the previous window's lag. A loaded machine's graph
    runs cycles without a late client (docs/live.md), so a recording may skip or repeat a stretch
    anywhere on the path, the stand-in microphone's included; one alignment for the whole would
    score those slips, not the denoising."""
    if len(rec) < len(s) // 2:
        die("%s: recording too short (%d frames, the signal has %d)" % (what, len(rec), len(s)), log)
    rec = np.concatenate([rec, np.zeros(len(s))])  # a client may lose its last buffer at SIGINT
    win, slip = RATE // 4, 3 * RATE // 4  # a starved recorder was seen to lose half a second
    first = int(np.argmax(np.abs(s) > 1e-3))  # where the speech begins
    lag = lag_of(rec, s[first:first + RATE], 3 * RATE + first) - first
    start, vals = lag, []
    for k in range(first, len(s) - win, win):
        ref = s[k:k + win]
        if 10 * np.log10(np.mean(ref ** 2) + 1e-30) < -40:
            continue  # no speech here: nothing to score against
        lo = max(lag + k - slip, 0)
        seg = rec[lo:lag + k + win + slip]
        at = lo + lag_of(seg, ref, len(seg) - win)
        lag = at - k
        vals.append(si_sdr(ref, rec[at:at + win]))
    if len(vals) < 8:
        die("%s: speech found in only %d windows of the recording" % (what, len(vals)), log)
    v = float(np.median(vals))
    print("%s: SI-SDR %.1f dB (median of %d windows of speech; found %.2f s into the recording, "
          "%+d frames of slips)" % (what, v, len(vals), (start + first) / RATE, lag - start))
    return v


class Recorder:
    """pw-record or parecord into a float WAV until stopped."""

    def __init__(self, cmd, path):
        self.path = path
        self.p = subprocess.Popen(cmd + [path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        x = de.read_wav(self.path) if os.path.exists(self.path) else np.zeros(0)
        return x


def pw_record(target, path, channels=1, props=None):
    cmd = ["pw-record", "--target", target, "--rate", str(RATE), "--channels", str(channels),
           "--format", "f32"]
    if props:
        cmd += ["-P", props]
    return Recorder(cmd, path)


def parecord(target, path):
    return Recorder(["parecord", "-d", target, "--rate=%d" % RATE, "--channels=1",
                     "--format=float32le", "--file-format=wav"], path)


def play(mic, noisy):
    r = run(["pw-play", "--target", mic + "-in", noisy])
    if r.returncode != 0:
        die("pw-play into %s failed: %s" % (mic, r.stderr))


class Daemon:
    def __init__(self, gpufir, tmp, extra="", example="desktop-mic.conf"):
        self.tmp = tmp
        self.log = os.path.join(tmp, "gpufir.log")
        self.sock = os.path.join(tmp, "status.sock")
        self.conf = os.path.join(tmp, example)
        with open(os.path.join(ROOT, "config", "examples", example)) as f:
            text = f.read()
        backend = "cuda" if os.environ.get("GPUFIR_TEST_BACKEND") == "cuda" else "cpu"
        text = re.sub(r'^backend = "auto";', 'backend = "%s";' % backend, text, flags=re.M)
        with open(self.conf, "w") as f:
            f.write(text + '\nstatus_socket = "%s";\n' % self.sock + extra)
        self.gpufir = gpufir
        self.p = subprocess.Popen([gpufir, "--live", "-c", self.conf], stdout=open(self.log, "w"),
                                  stderr=subprocess.STDOUT)
        DAEMONS.append(self.p)

    def status(self):
        return run([self.gpufir, "--status", self.sock]).stdout

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            die("gpufir did not stop within 10 s of SIGTERM", self.log)
        if rc != 0:
            die("gpufir exited with status %d" % rc, self.log)


def start(gpufir, tmp, mic, extra=""):
    d = Daemon(gpufir, tmp, extra)
    byname = wait_for("gpufir's source node " + NODE, lambda: nodes()[0].get(NODE), 15, d.log)
    wait_for("gpufir's capture linked to " + mic, lambda: capture_source() == mic, 10, d.log)
    return d, byname


def denoised_through(d, mic, s, noisy, what, pulse=False):
    """Play the noisy speech into @p mic; record gpufir's source: its SI-SDR beats the input's."""
    recs = [(what + " (pw-record --target %s)" % NODE, pw_record(NODE, os.path.join(d.tmp, "out.wav")))]
    if pulse:
        recs.append((what + " (parecord -d %s)" % NODE, parecord(NODE, os.path.join(d.tmp, "pa.wav"))))
    # Every recorder linked before the speech starts (a server just restarted links slowly).
    wait_for("%d recorders linked to %s" % (len(recs), NODE), lambda: links_from(NODE) >= len(recs), 10, d.log)
    play(mic, noisy)
    time.sleep(1.0)
    base = score(de.read_wav(noisy), s, "the noisy input", d.log)
    for name, r in recs:
        v = score(r.stop(), s, name, d.log)
        if v < base + MIN_GAIN_DB:
            die("%s: SI-SDR %.1f dB, not %.1f dB above the input's %.1f dB" % (name, v, MIN_GAIN_DB, base),
                d.log)


def ports_of(node, direction):
    r = run(["pw-link", "-o" if direction == "out" else "-i"])
    return [p.strip() for p in r.stdout.splitlines() if p.strip().startswith(node + ":")]


def port_of(node, direction):
    ports = ports_of(node, direction)
    return ports[0] if ports else None


def latency_status(d):
    """(total_latency_frames, device_period) from gpufir --status."""
    st = d.status()
    total = re.search(r"total_latency_frames: (\d+)", st)
    period = re.search(r"device_period: (\d+)", st)
    if not total or not period:
        die("gpufir --status lacks total_latency_frames or device_period:\n" + st, d.log)
    return int(total.group(1)), int(period.group(1))


def record_lag(d, mic, noisy, out=NODE):
    """The microphone's and gpufir's outputs (@p out's first port) recorded in one cycle (both into
    the null sink's two channels, its monitor recorded): the lag between them is what the node adds."""
    pairs = [(port_of(mic, "out"), "gf-null-sink:playback_FL"), (port_of(out, "out"), "gf-null-sink:playback_FR")]
    for a, b in pairs:
        if not a or run(["pw-link", a, b]).returncode != 0:
            die("cannot link %s to %s" % (a, b), d.log)
    r = pw_record("gf-null-sink", os.path.join(d.tmp, "both.wav"), 2, "{ stream.capture.sink = true }")
    time.sleep(1.0)
    play(mic, noisy)
    time.sleep(0.3)
    both = r.stop()
    for a, b in pairs:
        run(["pw-link", "-d", a, b])
    left, right = both[0::2], both[1::2]
    return lag_of(right, left, RATE // 5)


def measure_latency(d, mic, noisy, out=NODE):
    """What the node adds, measured, against what its status accounts for. A recording during which
    the stream's latency changed (auto slack resyncing after a late cycle on a loaded machine) says
    nothing about either value: it is measured again, up to three times."""
    for attempt in range(3):
        before = latency_status(d)
        lag = record_lag(d, mic, noisy, out)
        after = latency_status(d)
        if before == after:
            break
        print("the stream's latency changed during the recording (%d -> %d frames): measuring again"
              % (before[0], after[0]))
    else:
        die("the stream's latency kept changing during three recordings", d.log)
    total, period = after
    want = total + period
    print("latency added by the node: %d frames (%.2f ms), measured; gpufir's total_latency_frames %d "
          "(the stream and the suppressor) + one quantum of %d (the output stream's buffer, played in "
          "the next graph cycle) = %d" % (lag, 1000.0 * lag / RATE, total, period, want))
    # The minimum-phase FIR's own delay at the speech's frequencies is a few frames.
    if abs(lag - want) > 16:
        die("the node adds %d frames, not the %d its status accounts for" % (lag, want), d.log)


def port_latency(name, direction="output"):
    """The latency the graph holds on node @p name's ports of @p direction, of that direction (output
    ports: the capture latency; input ports: the playback latency), as (quanta, frames): one value,
    its minimum and maximum alike, on every port; else None."""
    r = run(["pw-dump"])
    try:
        objs = json.loads(r.stdout or "[]")
    except json.JSONDecodeError:
        return None
    ids = {o["id"] for o in objs if o.get("type") == "PipeWire:Interface:Node"
           and ((o.get("info") or {}).get("props") or {}).get("node.name") == name}
    vals = set()
    for o in objs:
        info = o.get("info") or {}
        if (o.get("type") != "PipeWire:Interface:Port" or info.get("direction") != direction
                or (info.get("props") or {}).get("node.id") not in ids):
            continue
        lats = [x for x in (info.get("params") or {}).get("Latency") or []
                if x.get("direction") == direction.capitalize()]
        vals.update((x.get("minQuantum"), x.get("minRate"), x.get("maxQuantum"), x.get("maxRate")) for x in lats)
        if not lats:
            vals.add(None)
    v = vals.pop() if len(vals) == 1 else None
    return (v[0], v[1]) if v and v[:2] == v[2:] else None


def check_published(d, what, node=NODE, device=MIC_A, direction="output"):
    """The latency gpufir's node tells the graph (a source's output ports' capture latency, what a
    client that records it sees; a sink's input ports' playback latency, what a client that plays
    into it sees): the device's own, plus one quantum and total_latency_frames, the figures the
    recording measured (measure_latency); followed within a few of the daemon's polls."""
    mic = port_latency(device, direction) or (0.0, 0)
    end = time.monotonic() + 5
    while True:
        total, _ = latency_status(d)
        want, got = (mic[0] + 1.0, mic[1] + total), port_latency(node, direction)
        if got == want or time.monotonic() > end:
            break
        time.sleep(0.2)
    print("%s: %s tells the graph %s quanta + %s frames; %s's %s + %s, gpufir's one quantum + "
          "total_latency_frames %d" % (what, node, got and got[0], got and got[1], device, mic[0], mic[1], total))
    if got != want:
        die("%s: %s's ports carry the latency %r (quanta, frames), not %r" % (what, node, got, want), d.log)
    return got


def reload_chain(d, chain):
    """The config's chain replaced by @p chain, and SIGHUP: once the status names no suppressor."""
    with open(d.conf) as f:
        text = f.read()
    text, n = re.subn(r"^chain = \[.*\];$", "chain = %s;" % json.dumps(chain), text, flags=re.M)
    if n != 1:
        die("desktop-mic.conf has no one-line chain = [...] to replace", d.log)
    with open(d.conf, "w") as f:
        f.write(text)
    d.p.send_signal(signal.SIGHUP)
    wait_for("the reload to a chain without the suppressor", lambda: "suppressor: none" in d.status(), 15, d.log)


def case_record(gpufir, tmp, s, noisy):
    d, (nid, props) = start(gpufir, tmp, MIC_A)
    want = {"media.class": "Audio/Source", "node.description": "gpufir: denoised microphone"}
    for k, v in want.items():
        if props.get(k) != v:
            die("%s: %s is %r, not %r" % (NODE, k, props.get(k), v), d.log)
    print("%s: node %d, %s" % (NODE, nid, ", ".join("%s = %s" % kv for kv in want.items())))
    denoised_through(d, MIC_A, s, noisy, "default source", pulse=True)
    measure_latency(d, MIC_A, noisy)
    before = check_published(d, "with the suppressor")
    reload_chain(d, ["hum", "hiss"])
    wait_for("gpufir's source after the reload", lambda: nodes()[0].get(NODE), 10, d.log)
    if check_published(d, "reloaded without it") == before:
        die("the latency told the graph did not change with the chain's", d.log)
    print(d.status())
    d.stop()


def case_follow(gpufir, tmp, s, noisy):
    d, (nid, _) = start(gpufir, tmp, MIC_A)
    set_default(MIC_B)
    wait_for("the capture to follow the default to " + MIC_B, lambda: capture_source() == MIC_B, 10, d.log)
    denoised_through(d, MIC_B, s, noisy, "after the default changed")
    byname, _ = nodes()
    run(["pw-cli", "destroy", str(byname[MIC_B][0])])
    run(["pw-cli", "destroy", str(byname[MIC_B + "-in"][0])])
    wait_for("the capture to fall back to " + MIC_A, lambda: capture_source() == MIC_A, 10, d.log)
    print("%s unplugged (its nodes destroyed): the capture fell back to %s" % (MIC_B, MIC_A))
    unplug_last(d, nid)
    mic = subprocess.Popen(["pw-loopback", "-n", MIC_B, "-m", "[ MONO ]",
                            "--capture-props=media.class=Audio/Sink node.name=%s-in" % MIC_B,
                            "--playback-props=media.class=Audio/Source node.name=%s" % MIC_B],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(MIC_B + " plugged in again to be followed", lambda: capture_source() == MIC_B, 10, d.log)
        denoised_through(d, MIC_B, s, noisy, "after the replug")
    finally:
        mic.terminate()
        mic.wait()
    if nodes()[0].get(NODE, (None,))[0] != nid:
        die("gpufir's source is not the same node any more", d.log)
    d.stop()


def unplug_last(d, nid):
    """MIC_A, the last source left, unplugged too: for longer than the daemon's stall bound
    (3 s) no source feeds the capture. gpufir must idle, not take it for a lost device: the
    same node stays for the apps that record it."""
    byname, _ = nodes()
    run(["pw-cli", "destroy", str(byname[MIC_A][0])])
    run(["pw-cli", "destroy", str(byname[MIC_A + "-in"][0])])
    time.sleep(IDLE_HOLD_S)
    if d.p.poll() is not None:
        die("gpufir exited (status %d) with no source left" % d.p.returncode, d.log)
    if nodes()[0].get(NODE, (None,))[0] != nid:
        die("gpufir's source went away with the last microphone", d.log)
    with open(d.log) as f:
        log = f.read()
    if "stalled" in log or "reopened" in log:
        die("gpufir took the unlinked capture for a lost device", d.log)
    print("the last microphone unplugged: gpufir's source stayed %.1f s, the stream idle" % IDLE_HOLD_S)


def case_restart(gpufir, tmp, s, noisy):
    d, (nid, _) = start(gpufir, tmp, MIC_A)
    r = run(["sh", os.environ["GPUFIR_PW_SCRIPT"], "--restart"])
    if r.returncode != 0:
        die("with-pipewire.sh --restart failed: " + r.stderr, d.log)
    print("PipeWire killed and restarted")
    wait_for("gpufir's source after the restart", lambda: nodes()[0].get(NODE), 20, d.log)
    wait_for("gpufir's capture linked again", lambda: capture_source() == MIC_A, 10, d.log)
    if d.p.poll() is not None:
        die("gpufir exited (status %d) instead of reconnecting" % d.p.returncode, d.log)
    denoised_through(d, MIC_A, s, noisy, "after the PipeWire restart")
    with open(d.log) as f:
        log = f.read()
    if "audio stream reopened" not in log:
        die("gpufir's log does not say it reopened the stream", d.log)
    d.stop()


IDLE_HOLD_S = 4.5  # the follow case: how long no source is plugged in (over the 3 s stall bound)
STOP_S = 0.3  # the xrun case: how long gpufir is stopped
MAX_XRUNS_RUNNING = 4  # and the most it may count in the second before
# The tone's cut before the stop: offline the chain cuts it by 15 dB (the depth); a noise estimate
# that learnt the digital silence before the tone stayed 10 dB under it where the speech presence
# judged P / L everywhere, and cut it by 2 to 4 dB.
MIN_TONE_CUT_DB = 11.0


def make_tone(tmp, seconds):
    """A 1 kHz tone over noise 20 dB below it, as a file to play."""
    rng = np.random.default_rng(11)
    t = np.arange(int(seconds * RATE)) / RATE
    x = 0.07 * np.sin(2 * np.pi * 1000.0 * t) + 0.005 * rng.standard_normal(len(t))
    path = os.path.join(tmp, "tone.wav")
    de.write_wav(path, x)
    return path


# The controls case: white noise, which the suppressor learns and cuts by its depth, in a
# recording of gpufir's source, 10 ms windows at a time.
NOISE_RMS, WIN = 0.005, RATE // 100
LEARN_S, EVERY_S = 4.0, 1.6  # the suppressor's noise estimate settles; then a change every EVERY_S
# The noise's level in force at each depth, bypass (None) included, dB relative to the noise played:
# the hiss low-pass takes 2.5 dB of white noise (14 to 24 kHz), and the suppressor's Wiener gain cuts
# steady noise by about its depth (measured: 12.7 dB at 15, 4.9 at 5).
LEVEL_DB = {None: -2.5, 15: -15.2, 5: -7.4}
# Each SetSuppressor and the depth in force after it (the config's is 15).
CHANGES = [({"bypass": True}, None), ({"bypass": False}, 15), ({"depth_db": 5.0}, 5),
           ({"bypass": True}, None), ({"bypass": False}, 5), ({"depth_db": 15.0}, 15),
           ({"bypass": True}, None)]
LEVEL_TOL_DB = 3.0
# Of a change, the most the level may move in 10 ms. Measured: 0.31 to 0.48 with the 30 ms ramp (a
# median 0.41), 0.57 to 0.83 with it cut to one frame (a median 0.65); a window's level of white
# noise is itself uncertain by some 0.1 of a change.
RAMP_SHARE_MAX, RAMP_SHARE_MEDIAN = 0.7, 0.52
COUNTERS = ("input_overflows", "output_underflows", "output_overflows", "late_blocks", "outages")
DROPOUT = 16  # exact zeros in a row: the noise is never that
MIN_JUDGED = 4  # of the changes, those with no graph xrun beside them


def api_call(path, cmd, arg, log):
    """One command over the control socket (a JSON message a line each way); its value."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
        c.settimeout(5)
        c.connect(path)
        c.sendall((json.dumps({cmd: arg}) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = c.recv(4096)
            if not chunk:
                break
            buf += chunk
    reply = json.loads(buf or b"{}").get(cmd, {})
    if reply.get("result") != "Ok":
        die("%s %s: %r" % (cmd, json.dumps(arg), reply), log)
    return reply.get("value")


def counters(d):
    st = d.status()
    vals = {}
    for k in COUNTERS + ("device_xruns", "blocks"):
        m = re.search(r"^%s: (\d+)$" % k, st, re.M)
        if not m:
            die("gpufir --status lacks %s:\n%s" % (k, st), d.log)
        vals[k] = int(m.group(1))
    return vals


def make_noise(tmp, seconds):
    """White noise, as a file to play; and its largest sample step."""
    x = NOISE_RMS * np.random.default_rng(11).standard_normal(int(seconds * RATE))
    path = os.path.join(tmp, "noise.wav")
    de.write_wav(path, x)
    return path, float(np.max(np.abs(np.diff(x))))


def noise_level_db(y):
    """The level of each 10 ms window of @p y, dB relative to the noise played."""
    n = len(y) // WIN
    rms = np.sqrt(np.mean(y[:n * WIN].reshape(n, WIN) ** 2, axis=1))
    return 20 * np.log10(np.maximum(rms, 1e-9) / NOISE_RMS)


def find_changes(lv, onset, log):
    """The window at which the level crosses half way (in dB) to each change's level, in order;
    @p onset: the window the noise starts in."""
    found = []
    # The plateau before the first change: the suppressor has learnt the noise.
    first = onset + int((LEARN_S - 0.3) * RATE / WIN)
    was = float(np.median(lv[first - int(0.6 * RATE / WIN):first]))
    if abs(was - LEVEL_DB[15]) > LEVEL_TOL_DB:
        die("before any change the noise is at %.1f dB, not %.1f" % (was, LEVEL_DB[15]), log)
    at, prev = first, LEVEL_DB[15]
    for arg, key in CHANGES:
        want = LEVEL_DB[key]
        mid = (prev + want) / 2
        cross = np.nonzero((lv[at:] > mid) if want > prev else (lv[at:] < mid))[0]
        if not len(cross):
            die("the level never reached %.1f dB after SetSuppressor %s" % (want, json.dumps(arg)), log)
        c = at + int(cross[0])
        found.append((c, prev, want, arg))
        at, prev = c + int(0.8 * RATE / WIN), want
    return found


def check_change(rec, lv, c, prev, want, arg, bound, log):
    """One change at window @p c: the plateau after it, the level's rate and the largest sample step."""
    w = RATE // WIN  # windows a second
    after = float(np.median(lv[c + w // 4:c + int(0.6 * w)]))
    before = float(np.median(lv[c - int(0.6 * w):c - w // 8]))
    if abs(after - want) > LEVEL_TOL_DB:
        die("SetSuppressor %s: the noise at %.1f dB after it, not %.1f" % (json.dumps(arg), after, want), log)
    amp = 10 ** (lv[c - w // 5:c + w // 5] / 20)
    share = float(np.max(np.abs(np.diff(amp)))) / abs(10 ** (after / 20) - 10 ** (before / 20))
    seg = rec[(c - w // 10) * WIN:(c + w // 10) * WIN]
    jump = float(np.max(np.abs(np.diff(seg))))
    print("SetSuppressor %-20s noise %6.1f -> %6.1f dB, at most %.2f of the way in 10 ms; largest step "
          "%.5f (bound %.5f)" % (json.dumps(arg), before, after, share, jump, bound))
    if share > RAMP_SHARE_MAX:
        die("SetSuppressor %s: the level moved %.2f of the way in 10 ms (ramped: at most %.2f)"
            % (json.dumps(arg), share, RAMP_SHARE_MAX), log)
    if jump > bound:
        die("SetSuppressor %s: a click, a sample step of %.5f (1.2 times the input's largest: %.5f)"
            % (json.dumps(arg), jump, bound), log)
    return share


def zero_runs(y):
    """Where @p y holds DROPOUT or more zeros in a row: (start, length) of each."""
    z = np.concatenate([[0], (y == 0.0).astype(np.int8), [0]])
    edges = np.diff(z)
    starts, ends = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0]
    return [(int(a), int(b - a)) for a, b in zip(starts, ends) if b - a >= DROPOUT]


def case_controls(gpufir, tmp):
    ctl = os.path.join(tmp, "control.sock")
    d, _ = start(gpufir, tmp, MIC_A, 'control_socket = "%s";\n' % ctl)
    seconds = LEARN_S + EVERY_S * (len(CHANGES) + 0.5)
    noise, step = make_noise(tmp, seconds)
    r = pw_record(NODE, os.path.join(tmp, "out.wav"))
    wait_for("pw-record linked to " + NODE, lambda: links_from(NODE) >= 1, 10, d.log)
    t0 = time.monotonic()
    player = subprocess.Popen(["pw-play", "--target", MIC_A + "-in", noise])
    time.sleep(LEARN_S - 1.0)
    c0 = counters(d)
    for k, (arg, _) in enumerate(CHANGES):
        time.sleep(max(0.0, t0 + LEARN_S + k * EVERY_S - time.monotonic()))
        api_call(ctl, "SetSuppressor", arg, d.log)
    if player.wait(timeout=30) != 0:
        die("pw-play into %s failed" % MIC_A, d.log)
    c1 = counters(d)
    rec = r.stop()
    print("counters before the changes %s, after %s" % (c0, c1))
    for k in COUNTERS:
        if c1[k] != c0[k]:
            die("%s went from %d to %d over the changes" % (k, c0[k], c1[k]), d.log)
    if c1["blocks"] <= c0["blocks"]:
        die("the stream's block count did not grow (%d, then %d)" % (c0["blocks"], c1["blocks"]), d.log)
    live = np.nonzero(np.abs(rec) > 1e-6)[0]  # from the noise's first sample to its last
    if len(live) < RATE * seconds / 2:
        die("the recording holds %d frames of the noise, not %.0f" % (len(live), RATE * seconds), d.log)
    # A graph cycle that ran without gpufir's node (device_xruns: a loaded machine) leaves a quantum
    # of zeros in the recording; any other run of zeros is gpufir's dropout.
    gaps = [(live[0] + a, n) for a, n in zero_runs(rec[live[0]:live[-1]])]
    missed = c1["device_xruns"]  # since the start: the recording began before c0
    print("graph cycles missed (device_xruns) %d; runs of zeros in the recording %s" % (missed, gaps))
    if len(gaps) > missed:
        die("%d dropouts (runs of zeros) in the recording, %d of them with no graph xrun"
            % (len(gaps), len(gaps) - missed), d.log)
    lv = noise_level_db(rec)
    # A click steps further than the input does at full level.
    bound, w, shares = 1.2 * step, RATE // WIN, []
    for c, prev, want, arg in find_changes(lv, live[0] // WIN, d.log):
        if any(abs(a // WIN - c) < w // 2 for a, _ in gaps):
            print("SetSuppressor %s: a graph xrun beside it, not judged" % json.dumps(arg))
            continue
        shares.append(check_change(rec, lv, c, prev, want, arg, bound, d.log))
    if len(shares) < MIN_JUDGED:
        die("only %d changes free of graph xruns (the machine too loaded to judge)" % len(shares), d.log)
    print("the level's largest move in 10 ms, of each change: median %.2f" % np.median(shares))
    if np.median(shares) > RAMP_SHARE_MEDIAN:
        die("the level moved a median %.2f of the way in 10 ms (ramped: at most %.2f)"
            % (np.median(shares), RAMP_SHARE_MEDIAN), d.log)
    with open(d.log) as f:
        if "audio stream reopened" in f.read():
            die("the stream was reopened during the changes", d.log)
    d.stop()


def tone_cut_db(rec, tone, d):
    """How far gpufir's source is below the tone played, in dB, over 0.8 s from 3.2 s into the tone:
    the suppressor has learnt it by then (a sound far above the suppressor's longer minimum reads as
    speech until that minimum has seen it: 2.4 s at most)."""
    onset = np.nonzero(np.abs(rec) > 0.01)[0]
    if not len(onset):
        die("the tone is not in the recording of %s" % NODE, d.log)
    a, b = onset[0] + int(3.2 * RATE), onset[0] + int(4.0 * RATE)
    x = de.read_wav(tone)
    return 20 * np.log10(np.sqrt(np.mean(x[:b - a] ** 2)) / max(np.sqrt(np.mean(rec[a:b] ** 2)), 1e-12))


def case_xrun(gpufir, tmp):
    """gpufir stopped (SIGSTOP) for STOP_S while its capture is linked: the graph runs on without it,
    and the cycles it missed show in device_xruns; hardly any in the second before, while it ran.
    Before the stop, the tone (steady, in noise 20 dB under it) is cut by about the suppressor's
    depth, as offline, though the stream ran on digital silence before it (the microphone not yet
    fed) and its noise estimate learnt the zeros (docs/live.md)."""
    d, _ = start(gpufir, tmp, MIC_A)
    tone = make_tone(tmp, 5.5)
    r = pw_record(NODE, os.path.join(tmp, "out.wav"))
    wait_for("pw-record linked to " + NODE, lambda: links_from(NODE) >= 1, 10, d.log)
    player = subprocess.Popen(["pw-play", "--target", MIC_A + "-in", tone])
    time.sleep(3.2)
    running = counters(d)["device_xruns"]
    time.sleep(1.0)
    before = counters(d)["device_xruns"]
    d.p.send_signal(signal.SIGSTOP)
    time.sleep(STOP_S)
    d.p.send_signal(signal.SIGCONT)
    time.sleep(1.0)
    after = counters(d)["device_xruns"]
    player.wait(timeout=30)
    cut = tone_cut_db(r.stop(), tone, d)
    print("device_xruns %d a second before gpufir was stopped for %.1f s, %d just before, %d after"
          % (running, STOP_S, before, after))
    print("the tone in noise cut by %.1f dB (depth %.0f dB; at least %.0f dB required)" % (cut, 15, MIN_TONE_CUT_DB))
    # A loaded machine's graph may skip the node now and then (docs/live.md); one that counted every
    # cycle would have some 180 in a second.
    if before - running > MAX_XRUNS_RUNNING:
        die("device_xruns went from %d to %d in a second while gpufir ran unstopped" % (running, before), d.log)
    if after <= before:
        die("device_xruns did not count the cycles missed while gpufir was stopped", d.log)
    if cut < MIN_TONE_CUT_DB:
        die("the suppressor cut the steady tone by %.1f dB, not its depth" % cut, d.log)
    d.stop()


def set_default(name, what="source"):
    run(["pw-metadata", "-n", "default", "0", "default.configured.audio." + what,
         '{ "name": "%s" }' % name, "Spa:String:JSON"])


# The speakers case: gpufir's sink, its playback stream, and the null sinks it plays to.
SINK, PLAYBACK, SINK_A, SINK_B = "gpufir_speakers", "gpufir_playback", "gf-null-sink", "gf-null-sink-b"
SPEAKERS_S = 5.0  # of the material: 1.5 s of noise, then 3.5 s of speech (12 windows to score)


def heard_at(d, sink, play_cmd, s, noisy, what):
    """@p play_cmd plays the noisy speech into gpufir's sink; the null sink @p sink's monitor, where
    gpufir plays, is recorded: its SI-SDR beats the input's."""
    r = pw_record(sink, os.path.join(d.tmp, sink + ".wav"), 2, "{ stream.capture.sink = true }")
    wait_for("pw-record linked to %s's monitor" % sink, lambda: links_from(sink) >= 1, 10, d.log)
    p = run(play_cmd + [noisy])
    if p.returncode != 0:
        die("%s failed: %s" % (" ".join(play_cmd), p.stderr), d.log)
    time.sleep(1.0)
    rec = r.stop()
    base = score(de.read_wav(noisy), s, "the noisy input", d.log)
    v = score(rec[0::2], s, what, d.log)
    if v < base + MIN_GAIN_DB:
        die("%s: SI-SDR %.1f dB, not %.1f dB above the input's %.1f dB" % (what, v, MIN_GAIN_DB, base), d.log)


def speakers_latency(d, noisy):
    """What the sink adds, measured as the source's is (measure_latency): the stand-in microphone
    linked into gpufir's sink and, beside gpufir's playback, into the free null sink SINK_A."""
    mic, ins = port_of(MIC_A, "out"), ports_of(SINK, "in")
    for p in ins:
        if run(["pw-link", mic, p]).returncode != 0:
            die("cannot link %s to %s" % (mic, p), d.log)
    measure_latency(d, MIC_A, excerpt(noisy, 1.5, 4.5, "lag.wav"), PLAYBACK)  # enough to correlate
    for p in ins:
        run(["pw-link", "-d", mic, p])


def name_taken(gpufir, tmp, example, node, d):
    """A second daemon of the same config, while the first runs: its node's name is taken, so it
    stops at start-up with a configuration error (exit status 6) that says so; the first's node
    stays as it was."""
    os.mkdir(os.path.join(tmp, "second"))
    d2 = Daemon(gpufir, os.path.join(tmp, "second"), example=example)
    try:
        rc = d2.p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        die("a second daemon named its node %s as well, and ran" % node, d2.log)
    with open(d2.log) as f:
        log = f.read()
    want = "PipeWire has a node named '%s' already, of process %d" % (node, d.p.pid)
    if rc != 6 or want not in log:
        die("a second daemon for %s: exit status %d, not 6 with \"%s\"" % (node, rc, want), d2.log)
    print("a second daemon of the same config: exit status 6, \"%s\"" % want)


def excerpt(path, a, b, name):
    """Seconds @p a to @p b of the WAV @p path, as the WAV @p name beside it."""
    out = os.path.join(os.path.dirname(path), name)
    de.write_wav(out, de.read_wav(path)[int(a * RATE):int(b * RATE)])
    return out


def null_sink(name):
    """A null sink @p name (stereo), as with-pipewire.sh makes gf-null-sink: a device plugged in."""
    run(["pw-cli", "create-node", "adapter", "{ factory.name = support.null-audio-sink node.name = %s "
         "media.class = Audio/Sink object.linger = true audio.position = [ FL FR ] }" % name])


def unplug_sink(d):
    """SINK_B, the default sink, unplugged (its node destroyed): the playback falls back to SINK_A;
    plugged in again: the playback returns to it, as the configured default."""
    run(["pw-cli", "destroy", str(nodes()[0][SINK_B][0])])
    wait_for("the playback to fall back to " + SINK_A, lambda: peer(PLAYBACK, False) == SINK_A, 10, d.log)
    null_sink(SINK_B)
    wait_for(SINK_B + " plugged in again to be followed", lambda: peer(PLAYBACK, False) == SINK_B, 10, d.log)
    print("%s unplugged: the playback fell back to %s; plugged in again: it returned" % (SINK_B, SINK_A))


def case_speakers(gpufir, tmp, s, noisy):
    """gpufir as denoised speakers (config/examples/desktop-speakers.conf): an app plays into its
    sink, gpufir plays to the default sink, following it when it changes. The first play is the
    whole material: the sink ran on digital silence before it, and a steady noise after silence
    passes the suppressor for up to 3 s (docs/live.md); later plays, the noise learnt, its first
    SPEAKERS_S."""
    short = s[:int(SPEAKERS_S * RATE)], excerpt(noisy, 0.0, SPEAKERS_S, "noisy-short.wav")
    null_sink(SINK_B)
    set_default(SINK_A, "sink")
    d = Daemon(gpufir, tmp, example="desktop-speakers.conf")
    nid, props = wait_for("gpufir's sink node " + SINK, lambda: nodes()[0].get(SINK), 15, d.log)
    wait_for("gpufir's playback linked to " + SINK_A, lambda: peer(PLAYBACK, False) == SINK_A, 10, d.log)
    want = {"media.class": "Audio/Sink", "node.description": "gpufir: denoised speakers"}
    for k, v in want.items():
        if props.get(k) != v:
            die("%s: %s is %r, not %r" % (SINK, k, props.get(k), v), d.log)
    print("%s: node %d, %s" % (SINK, nid, ", ".join("%s = %s" % kv for kv in want.items())))
    name_taken(gpufir, tmp, "desktop-speakers.conf", SINK, d)
    heard_at(d, SINK_A, ["pw-play", "--target", SINK], s, noisy, "pw-play --target " + SINK)
    set_default(SINK_B, "sink")
    wait_for("gpufir's playback to follow the default to " + SINK_B, lambda: peer(PLAYBACK, False) == SINK_B,
             10, d.log)
    print("the default sink switched to %s: gpufir's playback followed" % SINK_B)
    heard_at(d, SINK_B, ["paplay", "-d", SINK], *short, "paplay -d %s, played at %s" % (SINK, SINK_B))
    unplug_sink(d)
    speakers_latency(d, noisy)
    check_published(d, "the sink", SINK, SINK_B, "input")
    if nodes()[0].get(SINK, (None,))[0] != nid:
        die("gpufir's sink is not the same node any more", d.log)
    print(d.status())
    d.stop()


def main():
    cases = {"record": case_record, "follow": case_follow, "restart": case_restart, "speakers": case_speakers}
    if len(sys.argv) != 3 or sys.argv[2] not in list(cases) + ["controls", "xrun"]:
        sys.exit("usage: test_daemon_pipewire.py GPUFIR record|follow|restart|speakers|controls|xrun")
    if os.environ.get("GPUFIR_TEST_PIPEWIRE") != "1" or not os.environ.get("GPUFIR_PW_SCRIPT"):
        print("SKIP: not under scripts/with-pipewire.sh")
        sys.exit(77)
    for t in ("espeak-ng", "sox", "pw-record", "pw-play", "pw-link", "pw-dump", "parecord", "paplay",
              "pw-loopback"):
        if not shutil.which(t):
            print("SKIP: %s not found" % t)
            sys.exit(77)
    gpufir, case = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="gpufir-pwtest.")
    if case in ("controls", "xrun"):
        {"controls": case_controls, "xrun": case_xrun}[case](gpufir, tmp)
    else:
        s, noisy = make_material(tmp)
        cases[case](gpufir, tmp, s, noisy)
    shutil.rmtree(tmp)
    print("PASS")


if __name__ == "__main__":
    main()
