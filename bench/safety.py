#!/usr/bin/env python3
"""Safety benchmarks against a running sellable server (stdlib only, loopback only, bounded).

  safety.py login-flood URL API_KEY SERVER_PID [N]   N concurrent wrong sign-ins (default 500), each from
                                                     its own loopback address, while one client times API
                                                     calls; prints the server's peak RSS and the API's p99
  safety.py text-parts URL API_KEY SERVER_PID [N] [MB]
                                                     N code uploads at once (default 6) whose `name` text
                                                     part is MB megabytes (60): their answers and the
                                                     server's peak RSS (text parts are refused past 4 KB)
  safety.py idle URL API_KEY [N] [TIMEOUT]           N idle connections (default 2000) held open; times API
                                                     calls meanwhile, then counts how many the server closed
                                                     within TIMEOUT + 5 seconds
"""
import asyncio
import sys
import time
from urllib.parse import urlparse


def rss_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


async def http(host, port, raw, local=None):
    """One request on its own connection; returns (status, seconds)."""
    t = time.perf_counter()
    kw = {"local_addr": (local, 0)} if local else {}
    r, w = await asyncio.open_connection(host, port, **kw)
    w.write(raw)
    await w.drain()
    head = await r.readline()
    while True:
        line = await r.readline()
        if line in (b"\r\n", b""):
            break
    w.close()
    status = int(head.split()[1]) if head else 0
    return status, time.perf_counter() - t


def api_get(host, key):
    return (
        f"GET /api/v1/skus/TEA-JAS-100/stock HTTP/1.1\r\nHost: {host}\r\n"
        f"Authorization: Bearer {key}\r\nConnection: close\r\n\r\n"
    ).encode()


async def probe(host, port, key, stop, samples):
    while not stop.is_set():
        s, dt = await http(host, port, api_get(host, key))
        samples.append((s, dt))
        await asyncio.sleep(0.01)


def p(samples, q):
    xs = sorted(dt for _, dt in samples)
    return xs[min(len(xs) - 1, int(len(xs) * q))] * 1000 if xs else float("nan")


async def login_flood(url, key, pid, n):
    u = urlparse(url)
    host, port = u.hostname, u.port
    base_rss = rss_kib(pid, "VmRSS")
    stop, samples = asyncio.Event(), []
    prober = asyncio.create_task(probe(host, port, key, stop, samples))
    await asyncio.sleep(0.5)
    body = "email=nobody{}%40example.com&password=wrong-password-guess"

    async def one(i):
        b = body.format(i).encode()
        raw = (
            f"POST /login HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {len(b)}\r\nConnection: close\r\n\r\n"
        ).encode() + b
        # 127.0.0.2 … 127.0.1.245: one address each, so no per-address throttle stops the flood.
        local = f"127.0.{1 + i // 250}.{2 + i % 250}"
        try:
            return (await asyncio.wait_for(http(host, port, raw, local), 60))[0]
        except Exception:
            return -1

    t = time.perf_counter()
    statuses = await asyncio.gather(*(one(i) for i in range(n)))
    elapsed = time.perf_counter() - t
    stop.set()
    await prober
    peak = rss_kib(pid, "VmHWM")
    counts = {}
    for s in statuses:
        counts[s] = counts.get(s, 0) + 1
    during = [x for x in samples]
    print(f"sign-ins        {n} concurrent, answered in {elapsed:.1f} s: {dict(sorted(counts.items()))}")
    print(f"server RSS      before {base_rss / 1024:.0f} MiB, peak {peak / 1024:.0f} MiB")
    print(f"API meanwhile   {len(during)} calls, p50 {p(during, 0.5):.1f} ms, p99 {p(during, 0.99):.1f} ms, "
          f"non-200 {sum(1 for s, _ in during if s != 200)}")


async def idle(url, key, n, timeout):
    u = urlparse(url)
    host, port = u.hostname, u.port
    conns = []
    t = time.perf_counter()
    for i in range(n):
        local = f"127.0.{1 + i // 250}.{2 + i % 250}"
        r, w = await asyncio.open_connection(host, port, local_addr=(local, 0))
        w.write(b"GET /api/v1/sku")  # half a request line, never finished
        conns.append((r, w, time.perf_counter()))
    await asyncio.gather(*(w.drain() for _, w, _ in conns))
    opened = time.perf_counter() - t
    samples = []
    for _ in range(200):
        samples.append(await http(host, port, api_get(host, key)))
    print(f"idle            {n} half-sent connections opened in {opened:.1f} s")
    print(f"API meanwhile   {len(samples)} calls, p50 {p(samples, 0.5):.1f} ms, p99 {p(samples, 0.99):.1f} ms, "
          f"non-200 {sum(1 for s, _ in samples if s != 200)}")

    async def closed(r, opened_at):
        # Each connection gets the timeout from its own opening, plus 3 s of slack.
        try:
            await asyncio.wait_for(r.read(), opened_at + timeout + 3 - time.perf_counter())
            return time.perf_counter() - opened_at
        except asyncio.TimeoutError:
            return None
        except Exception:
            return time.perf_counter() - opened_at

    results = await asyncio.gather(*(closed(r, at) for r, _, at in conns))
    done = sorted(x for x in results if x is not None)
    print(f"closed          {len(done)} of {n} within {timeout + 3:.0f} s of their opening"
          + (f" (after {done[0]:.1f}–{done[-1]:.1f} s)" if done else ""))
    for _, w, _ in conns:
        w.close()


async def text_parts(url, key, pid, n, mb):
    u = urlparse(url)
    host, port = u.hostname, u.port
    base = rss_kib(pid, "VmRSS")
    boundary = "sellablebench"

    async def one(i):
        r, w = await asyncio.open_connection(host, port)
        name = b"n" * (mb * 1024 * 1024)
        head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"sku\"\r\n\r\nGIFT-100\r\n"
                f"--{boundary}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\n").encode()
        tail = (f"\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"c.txt\"\r\n\r\n"
                f"CODE-1\n\r\n--{boundary}--\r\n").encode()
        length = len(head) + len(name) + len(tail)
        try:
            w.write((f"POST /api/v1/code-batches HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n"
                     f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {length}\r\n"
                     f"Connection: close\r\n\r\n").encode() + head)
            for k in range(0, len(name), 1 << 20):
                w.write(name[k:k + (1 << 20)])
                await w.drain()
            w.write(tail)
            await w.drain()
        except OSError:
            pass  # refused while it streamed: the answer is already there
        try:
            line = await r.readline()
        except OSError:
            line = b""
        w.close()
        w.close()
        return int(line.split()[1]) if line else 0

    t = time.perf_counter()
    statuses = await asyncio.gather(*(one(i) for i in range(n)))
    print(f"text parts      {n} uploads with a {mb} MB name part, answered in {time.perf_counter() - t:.1f} s: {statuses}")
    print(f"server RSS      before {base / 1024:.0f} MiB, peak {rss_kib(pid, 'VmHWM') / 1024:.0f} MiB")


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        sys.exit(2)
    what, url, key = sys.argv[1:4]
    if what == "login-flood":
        asyncio.run(login_flood(url, key, int(sys.argv[4]), int(sys.argv[5]) if len(sys.argv) > 5 else 500))
    elif what == "text-parts":
        n = int(sys.argv[5]) if len(sys.argv) > 5 else 6
        mb = int(sys.argv[6]) if len(sys.argv) > 6 else 60
        asyncio.run(text_parts(url, key, int(sys.argv[4]), n, mb))
    elif what == "idle":
        n = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
        timeout = float(sys.argv[5]) if len(sys.argv) > 5 else 10
        asyncio.run(idle(url, key, n, timeout))
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
