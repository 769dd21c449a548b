#!/usr/bin/env python3
"""Start-up time and idle memory of `pitchside run`, as systemd would see them.

Starts the gateway with a NOTIFY_SOCKET of our own, times exec -> READY=1 (the
moment systemd considers the service started), lets it idle, then reads its
resident memory from /proc (VmRSS now, VmHWM the peak) and checks /healthz.

    python3 scripts/footprint.py --bin target/release/pitchside
    python3 scripts/footprint.py --bin target-cross/aarch64-unknown-linux-gnu/release/pitchside \
        --runner "qemu-aarch64 -cpu cortex-a53 -L /usr/aarch64-linux-gnu"

The config is the packaged one (packaging/pitchside.toml) with its paths moved to
a temporary folder: one serial source on a pseudo-terminal nobody writes to, the
metrics endpoint on, the board's defaults under it (--board, default Pi 4). Under
a qemu runner the figures include qemu's own memory and emulation time.
"""
import argparse, os, pty, shlex, socket, statistics, subprocess, sys, tempfile, time, urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def vm(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024  # MiB
    raise KeyError(key)


def leaf_pid(pid):
    """The gateway's own pid: under `qemu-user` the runner execs in place."""
    return pid


def one_run(args, repo):
    with tempfile.TemporaryDirectory() as d:
        master, slave = pty.openpty()
        tty = os.ttyname(slave)
        port = free_port()
        cfg = open(os.path.join(repo, "packaging/pitchside.toml")).read()
        cfg = cfg.replace("/var/lib/pitchside", d).replace("/dev/serial0", tty)
        cfg = cfg.replace('"127.0.0.1:9898"', f'"127.0.0.1:{port}"')
        path = os.path.join(d, "pitchside.toml")
        open(path, "w").write(cfg)
        sock_path = os.path.join(d, "notify.sock")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(sock_path)
        sock.settimeout(30)
        env = dict(os.environ, NOTIFY_SOCKET=sock_path)
        cmd = shlex.split(args.runner) + [args.bin, "run", "--config", path, "--board", args.board]
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            while True:
                msg = sock.recv(4096).decode()
                if "READY=1" in msg:
                    break
            ready = time.monotonic() - t0
            time.sleep(args.idle)
            rss, hwm = vm(p.pid, "VmRSS"), vm(p.pid, "VmHWM")
            health = urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).status
        finally:
            p.terminate()
            _, err = p.communicate(timeout=30)
            os.close(master)
            os.close(slave)
        if p.returncode != 0:
            sys.exit(f"pitchside exited {p.returncode}: {err.decode()[-2000:]}")
        return ready, rss, hwm, health


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--runner", default="", help="e.g. a qemu-user command line")
    ap.add_argument("--board", default=os.path.join(repo, "boards/pi4.toml"))
    ap.add_argument("--idle", type=float, default=10, help="seconds to idle before reading memory")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    runs = [one_run(args, repo) for _ in range(args.runs)]
    ready = [r[0] * 1000 for r in runs]
    print(f"binary: {args.bin} ({os.path.getsize(args.bin):,} B){' under ' + args.runner if args.runner else ''}")
    print(f"start-up (exec -> READY=1) over {args.runs} runs: median {statistics.median(ready):.1f} ms, max {max(ready):.1f} ms")
    print(f"idle after {args.idle:g} s: VmRSS median {statistics.median(r[1] for r in runs):.1f} MiB, "
          f"max {max(r[1] for r in runs):.1f} MiB; peak VmHWM {max(r[2] for r in runs):.1f} MiB; /healthz {runs[-1][3]}")


if __name__ == "__main__":
    main()
