#!/usr/bin/env python3
"""Does the control API cost the audio path anything? (docs/benchmarks.md, "Control API load")

Runs the real `gpufir --live` under JACK's dummy driver (run it through
scripts/with-jackd.sh), a 2 ch x TAPS-tap filter on the cpu backend, twice
for SECONDS each (under the 60 s stats line, so its window is the whole run):
  A. with no control API client;
  B. with 10 WebSocket clients subscribed to SignalLevelsEvent every
     INTERVAL ms (default 20, the fastest allowed) and one Unix-socket client
     sending GetStatus and GetVolume back to back.
The worker's engine time per block (median, p99, max over every block of the
run) comes from the daemon's stats line at exit, whose window only that line
cuts. (The status socket's block_us_* are the last health-poll window, which
every loop pass cuts: under a stream of API messages those windows hold a
block or none, so they cannot compare the two runs.) It prints both figures,
each run's xruns (gpufir's and the device's), late blocks and latency steps
(an auto slack that grew), and their ratio only where neither run had any of
those: a run whose stream glitched or changed its latency measured a
different thing, and a ratio would hide it (exit status 1 then). It
measures; it passes or fails nothing else.
The WebSocket clients connect from 127.0.0.2, 127.0.0.3, ... (8 to an address:
the daemon's per-address cap).

usage: scripts/with-jackd.sh python3 bench/bench-api-load.py [build/src/gpufir] [--seconds S]
       [--taps N] [--interval MS] [--clients N]
       python3 bench/bench-api-load.py --from-logs QUIET_LOG LOADED_LOG  (a run's logs read again)
"""
import argparse, base64, json, os, random, socket, statistics, subprocess, sys, tempfile, threading, time


def ws_connect(port, i):
    # The daemon serves at most 8 connections from one address (docs/api.md, "Limits").
    s = socket.create_connection(("127.0.0.1", port), timeout=5,
                                 source_address=("127.0.0.%d" % (2 + i // 8), 0))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % key).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(4096)
    if b" 101 " not in head.split(b"\r\n")[0]:
        raise RuntimeError("WebSocket upgrade refused: %r" % head[:80])
    return s, head.split(b"\r\n\r\n", 1)[1]


def ws_send(s, text):
    data, mask = text.encode(), os.urandom(4)
    n = len(data)
    hdr = bytes([0x81, 0x80 | n]) if n < 126 else bytes([0x81, 0xFE]) + n.to_bytes(2, "big")
    s.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))


def ws_reader(s, rest, counts, i, stop):
    """Read and count the pushes (frames' bytes only; their text is not parsed)."""
    s.settimeout(0.5)
    buf = rest
    while not stop.is_set():
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        if not chunk:
            return
        buf += chunk
        while len(buf) >= 2:
            n, off = buf[1] & 0x7F, 2
            if n == 126:
                if len(buf) < 4:
                    break
                n, off = int.from_bytes(buf[2:4], "big"), 4
            if len(buf) < off + n:
                break
            counts[i] += 1
            buf = buf[off + n:]


def hammer(path, counts, stop):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    f = s.makefile("rb")
    while not stop.is_set():
        for cmd in (b'"GetStatus"\n', b'"GetVolume"\n'):
            s.sendall(cmd)
            f.readline()
            counts[0] += 1


def stats_line(log_path):
    """(median, p99, max, blocks, xruns in, out, device xruns, late blocks, latency steps) summed or
    taken from the daemon's log: the block times of the last stats line (at exit, whose window is the
    whole run), the xrun and late-block counts of every one (each counts its own window), and the
    "latency now" lines (the stream's latency changed: an auto slack step after an underrun)."""
    import re
    text = open(log_path).read()
    found = re.findall(r"block us median (\S+) p99 (\S+) max (\S+) over (\d+) blocks", text)
    xr = re.findall(r"xruns in (\d+) out (\d+) over (\d+), late blocks (\d+) .*?device xruns (\d+)", text)
    if not found:
        return None
    c = [sum(int(x[i]) for x in xr) for i in range(5)]
    steps = len(re.findall(r"latency now \d+ frames", text))
    return tuple(float(x) for x in found[-1]) + (c[0], c[1] + c[2], c[4], c[3], steps)


def run_phase(a, d, conf, ctl_path, port, loaded):
    """One daemon run of a.seconds with or without the API load; its block times from the exit stats line
    (the stats line's own window: cut only by its own reader, so the whole run)."""
    log_path = d + ("/loaded.log" if loaded else "/quiet.log")
    log = open(log_path, "w")
    p = subprocess.Popen([a.gpufir, "--live", "-c", conf], stdout=log, stderr=subprocess.STDOUT)
    rate_p = rate_c = 0.0
    try:
        end = time.time() + 30
        while time.time() < end and "ready: audio flows" not in open(log_path).read():
            time.sleep(0.2)
        stop, socks, threads = threading.Event(), [], []
        pushes, calls = [0] * a.clients, [0]
        if loaded:
            for i in range(a.clients):
                s, rest = ws_connect(port, i)
                ws_send(s, json.dumps({"SubscribeSignalLevels": a.interval}))
                socks.append(s)
                threads.append(threading.Thread(target=ws_reader, args=(s, rest, pushes, i, stop)))
            threads.append(threading.Thread(target=hammer, args=(ctl_path, calls, stop)))
            for t in threads:
                t.start()
        t0 = time.time()
        time.sleep(a.seconds)
        rate_p, rate_c = sum(pushes) / (time.time() - t0), calls[0] / (time.time() - t0)
        stop.set()
        for t in threads:
            t.join(5)
        for s in socks:
            s.close()
    finally:
        p.terminate()
        p.wait(20)
    return stats_line(log_path), rate_p, rate_c


def report(quiet, busy, names):
    """Both runs' figures, and their ratio only where neither glitched. @return the exit status"""
    print("engine time per block over the whole run, us (the daemon's exit stats line):")
    row = ("%-52s median %6.0f  p99 %6.0f  max %7.0f  blocks %7d  xruns in %d out %d device %d"
           "  late %d  latency steps %d")
    print(row % (names[0], *quiet))
    print(row % (names[1], *busy))
    glitched = [n for n, r in zip(names, (quiet, busy)) if any(r[4:])]
    if glitched:
        print("no ratio: %s had xruns (gpufir's or the device's), late blocks or a latency step: "
              "block times of a run that glitched are not those of a clean one"
              % " and ".join(n.split(".")[0] for n in glitched))
        return 1
    print("ratio B/A: median %.3f, p99 %.3f, max %.3f"
          % tuple(b / q if q else float("nan") for b, q in zip(busy[:3], quiet[:3])))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpufir", nargs="?", default="build/src/gpufir")
    ap.add_argument("--seconds", type=float, default=30.0)  # under the 60 s stats line
    ap.add_argument("--taps", type=int, default=4095)
    ap.add_argument("--interval", type=int, default=20)
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--from-logs", nargs=2, metavar=("QUIET_LOG", "LOADED_LOG"))
    a = ap.parse_args()
    names = ("A. no API client",
             "B. %d WS clients at %d ms + GetStatus/GetVolume loop" % (a.clients, a.interval))
    if a.from_logs:
        runs = [stats_line(p) for p in a.from_logs]
        if not all(runs):
            sys.exit("no stats line in %s" % " or ".join(a.from_logs))
        return report(runs[0], runs[1], names)
    d = tempfile.mkdtemp(prefix="gpufir-bench-api-")
    rng = random.Random(1)
    with open(os.path.join(d, "taps.txt"), "w") as f:
        f.writelines("%.9f\n" % (rng.uniform(-1, 1) * 0.999 ** i) for i in range(a.taps))
    st_path, ctl_path, port = d + "/status", d + "/control", 20000 + os.getpid() % 20000
    conf = d + "/gpufir.conf"
    with open(conf, "w") as f:
        f.write('sample_rate = 48000;\nblock_frames = 64;\nbackend = "cpu";\nstatus_socket = "%s";\n'
                'control_socket = "%s";\ncontrol_port = %d;\n'
                'input = { device = "system"; host_api = "JACK"; channels = 2; };\n'
                'output = { device = "system"; host_api = "JACK"; };\n'
                'filters = ( { name = "f"; file = "taps.txt"; format = "text"; } );\nchain = ["f"];\n'
                % (st_path, ctl_path, port))
    quiet, _, _ = run_phase(a, d, conf, ctl_path, port, False)
    busy, rate_p, rate_c = run_phase(a, d, conf, ctl_path, port, True)
    if not quiet or not busy:
        sys.exit("no stats line in the daemon's log (%s)" % d)
    print("gpufir --live, JACK dummy driver, 48 kHz, block 64, 2 ch x %d taps, cpu backend; %.0f s each"
          % (a.taps, a.seconds))
    print("B's load: %.0f pushes/s received, %.0f calls/s answered" % (rate_p, rate_c))
    print("daemon logs (their stats lines: xruns, callback gaps): %s (--from-logs %s/quiet.log %s/loaded.log)"
          % (d, d, d))
    return report(quiet, busy, names)


if __name__ == "__main__":
    sys.exit(main())
