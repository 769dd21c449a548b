#!/usr/bin/env python3
"""What the venue console costs: CPU and memory of `pitchside run` at a given
event rate with 0 and with N consoles open (SPEC §10; docs/src/performance.md, "Venue console").

Each console is what a browser tab does: one GET /api/state, then the event
stream GET /api/events read continuously. The gateway runs the built-in
simulator at --rate events/s into a temporary folder. After --warmup seconds,
CPU time (utime + stime from /proc) and resident memory are sampled for
--seconds; CPU is quoted as a percentage of one core, and the events processed per
second are read from /metrics (pitchside_input_rows_total).

With --stalled K, K more clients open the event stream and never read it (a
tablet whose Wi-Fi froze): the gateway must drop them and keep its pace. Set
--rate above what the machine can process to see the pace itself.

    python3 scripts/console_cost.py --bin target/release/pitchside --rate 1000 --consoles 0 16
    python3 scripts/console_cost.py --rate 1000000 --consoles 1 --stalled 0 4
"""
import argparse, os, socket, subprocess, sys, tempfile, threading, time, urllib.request

CONFIG = """\
[venue]
id = "cost"
gateway_id = "gw-1"
[output]
store = "file://{d}/store"
spool_dir = "{d}/spool"
flush_interval = "10s"
[metrics]
listen = "127.0.0.1:{mport}"
[console]
listen = "127.0.0.1:{port}"
max_clients = {max_clients}
[sources.simulator]
rate = {rate}
players = 22
pitch_devices = 1
crowd_zones = 4
generic_devices = 2
anomaly_rate = 0.002
seed = 7
"""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def proc_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid, key="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def input_rows(mport):
    text = urllib.request.urlopen(f"http://127.0.0.1:{mport}/metrics", timeout=10).read().decode()
    for line in text.splitlines():
        if line.startswith("pitchside_input_rows_total"):
            return float(line.split()[-1])
    raise KeyError("pitchside_input_rows_total")


def stalled(port, stop):
    """A client that asks for the event stream and never reads it."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    stop.wait()
    s.close()


def console(port, stop, counts, i):
    """One browser tab: the state, then the event stream, read until stop."""
    urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=10).read()
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    s.settimeout(2)
    while not stop.is_set():
        try:
            b = s.recv(65536)
        except socket.timeout:
            continue
        if not b:
            break
        counts[i] += b.count(b"\n\n")
    s.close()


def measure(args, n, k):
    with tempfile.TemporaryDirectory() as d:
        port, mport = free_port(), free_port()
        cfg = os.path.join(d, "c.toml")
        with open(cfg, "w") as f:
            f.write(CONFIG.format(d=d, port=port, mport=mport, rate=args.rate,
                                  max_clients=max(n + k, 1)))
        p = subprocess.Popen([args.bin, "run", "--config", cfg], cwd=d,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        stop = threading.Event()
        counts = [0] * n
        try:
            deadline = time.time() + 30
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=2).read()
                    break
                except OSError:
                    if time.time() > deadline or p.poll() is not None:
                        sys.exit("the gateway did not serve its console")
                    time.sleep(0.2)
            threads = [threading.Thread(target=console, args=(port, stop, counts, i), daemon=True)
                       for i in range(n)]
            threads += [threading.Thread(target=stalled, args=(port, stop), daemon=True)
                        for _ in range(k)]
            for t in threads:
                t.start()
            time.sleep(args.warmup)
            c0, r0, t0 = proc_cpu_s(p.pid), input_rows(mport), time.monotonic()
            rss = []
            while time.monotonic() - t0 < args.seconds:
                time.sleep(1)
                rss.append(rss_mib(p.pid))
            elapsed = time.monotonic() - t0
            cpu = (proc_cpu_s(p.pid) - c0) / elapsed * 100
            rate = (input_rows(mport) - r0) / elapsed
            peak = rss_mib(p.pid, "VmHWM")
            received = sum(counts)
        finally:
            stop.set()
            p.terminate()
            try:
                p.wait(timeout=120)
            except subprocess.TimeoutExpired:  # a long drain does not matter here
                p.kill()
                p.wait()
        return cpu, sum(rss) / len(rss), peak, received, rate


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/pitchside")
    ap.add_argument("--rate", type=float, default=1000)
    ap.add_argument("--consoles", type=int, nargs="+", default=[0, 16])
    ap.add_argument("--stalled", type=int, nargs="+", default=[0])
    ap.add_argument("--warmup", type=float, default=10)
    ap.add_argument("--seconds", type=float, default=60)
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    print("| consoles | stalled | events/s | CPU (% of one core) | RSS mean (MiB) | RSS peak (MiB) | SSE messages read |")
    print("|---|---|---|---|---|---|---|")
    for n in args.consoles:
        for k in args.stalled:
            cpu, rss, peak, received, rate = measure(args, n, k)
            print(f"| {n} | {k} | {rate:,.0f} | {cpu:.1f} | {rss:.1f} | {peak:.1f} | {received} |",
                  flush=True)


if __name__ == "__main__":
    main()
