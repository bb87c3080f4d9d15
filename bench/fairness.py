#!/usr/bin/env python3
"""Fairness benchmarks of issue 52 against a running sellable server (stdlib only, loopback only).

  fairness.py account-flood URL SERVER_PID TARGET_EMAIL OTHER_EMAIL OTHER_PASSWORD [N] [ADDRS] [SECONDS]
      N concurrent wrong sign-ins for one account (default 300) from ADDRS loopback addresses (200), for
      SECONDS (60): passwords checked for that account per minute (answers 401), another account's
      sign-in latency meanwhile, the server's peak RSS.
  fairness.py webhooks URL KEY_A KEY_B [DEAD] [SECONDS]
      Merchant A registers DEAD endpoints (50) that take connections and never answer; both merchants
      make events for SECONDS (60); merchant B's receiver times each event from its occurred_at.
"""
import asyncio
import json
import sys
import threading
import time
import urllib.request
from datetime import datetime
from urllib.parse import urlparse


def rss_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def p(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))] * 1000 if xs else float("nan")


async def post_login(host, port, email, password, local):
    body = f"email={email.replace('@', '%40')}&password={password}".encode()
    raw = (
        f"POST /login HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
    t = time.perf_counter()
    r, w = await asyncio.open_connection(host, port, local_addr=(local, 0))
    w.write(raw)
    await w.drain()
    head = await r.readline()
    retry = 1.0
    while True:
        line = await r.readline()
        if line in (b"\r\n", b""):
            break
        if line.lower().startswith(b"retry-after:"):
            retry = float(line.split(b":")[1].strip() or 1)
    w.close()
    return (int(head.split()[1]) if head else 0), time.perf_counter() - t, retry


async def account_flood(url, pid, target, other, other_pw, n, addrs, seconds):
    u = urlparse(url)
    host, port = u.hostname, u.port
    base = rss_kib(pid, "VmRSS")
    end = time.perf_counter() + seconds
    counts, others = {}, []
    other_counts = {}

    async def attacker(i):
        local = f"127.0.{10 + (i % addrs) // 250}.{2 + (i % addrs) % 250}"
        while time.perf_counter() < end:
            try:
                s, _, retry = await post_login(host, port, target, f"guess-{i}-{time.time_ns()}", local)
            except Exception:
                s, retry = -1, 1.0
            counts[s] = counts.get(s, 0) + 1
            if s != 401:
                # An attacker comes back as soon as it is told, at most a second later.
                await asyncio.sleep(min(retry, 1.0))

    async def owner_of_another_account():
        while time.perf_counter() < end:
            s, dt, _ = await post_login(host, port, other, other_pw, "127.0.200.7")
            other_counts[s] = other_counts.get(s, 0) + 1
            others.append(dt)
            await asyncio.sleep(0.2)

    t = time.perf_counter()
    await asyncio.gather(*(attacker(i) for i in range(n)), owner_of_another_account())
    minutes = (time.perf_counter() - t) / 60
    print(f"flood           {n} concurrent wrong sign-ins for {target} from {addrs} addresses, {seconds} s: "
          f"{dict(sorted(counts.items()))}")
    print(f"checked         {counts.get(401, 0)} passwords of that account, {counts.get(401, 0) / minutes:.1f} per minute")
    print(f"other account   {len(others)} sign-ins {dict(sorted(other_counts.items()))}, "
          f"p50 {p(others, 0.5):.0f} ms, p99 {p(others, 0.99):.0f} ms")
    print(f"server RSS      before {base / 1024:.0f} MiB, peak {rss_kib(pid, 'VmHWM') / 1024:.0f} MiB")


def api(url, key, method, path, body=None):
    req = urllib.request.Request(url + path, method=method, data=json.dumps(body).encode() if body else None,
                                 headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


async def webhooks(url, key_a, key_b, dead_n, seconds):
    held = []

    async def never_answer(r, w):
        held.append(w)

    dead = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    dead_port = dead.sockets[0].getsockname()[1]
    latencies, seen = [], set()

    async def receive(r, w):
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = await r.read(4096)
            if not chunk:
                return
            head += chunk
        header, body = head.split(b"\r\n\r\n", 1)
        length = int(next(l.split(b":")[1] for l in header.split(b"\r\n") if l.lower().startswith(b"content-length")))
        while len(body) < length:
            body += await r.read(length - len(body))
        arrived = time.time()
        e = json.loads(body)
        if e["id"] not in seen and e["type"] == "sku.created":
            seen.add(e["id"])
            latencies.append(arrived - datetime.fromisoformat(e["occurred_at"]).timestamp())
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await w.drain()
        w.close()

    rx = await asyncio.start_server(receive, "127.0.0.1", 0)
    rx_port = rx.sockets[0].getsockname()[1]
    for i in range(dead_n):
        s, b = await asyncio.to_thread(api, url, key_a, "POST", "/api/v1/webhooks",
                                       {"url": f"http://127.0.0.1:{dead_port}/hook/{i}", "events": ["*"]})
        assert s == 201, b
    s, b = await asyncio.to_thread(api, url, key_b, "POST", "/api/v1/webhooks",
                                   {"url": f"http://127.0.0.1:{rx_port}/hook", "events": ["sku.created"]})
    assert s == 201, b
    end = time.perf_counter() + seconds
    made = {"a": 0, "b": 0}

    def product(key, who, n):
        s, b = api(url, key, "POST", "/api/v1/products",
                   {"name": f"Bench {who}{n}", "kind": "goods", "status": "ONLINE",
                    "skus": [{"code": f"BENCH-{who.upper()}-{n}", "name": "x", "price": 100}]})
        assert s == 201, b

    async def merchant(key, who, every):
        n = 0
        while time.perf_counter() < end:
            await asyncio.to_thread(product, key, who, n)
            n += 1
            made[who] = n
            await asyncio.sleep(every)

    await asyncio.gather(merchant(key_a, "a", 0.1), merchant(key_b, "b", 0.5))
    await asyncio.sleep(5)
    s, hooks = await asyncio.to_thread(api, url, key_a, "GET", "/api/v1/webhooks")
    paused = sum(1 for h in hooks["webhooks"] if h["status"] == "PAUSED")
    print(f"merchant A      {dead_n} endpoints that never answer, {made['a']} products (each an event to every "
          f"endpoint); {paused} paused by the breaker by the end")
    print(f"merchant B      {made['b']} events, {len(latencies)} delivered: p50 {p(latencies, 0.5):.0f} ms, "
          f"p99 {p(latencies, 0.99):.0f} ms, max {max(latencies) * 1000 if latencies else float('nan'):.0f} ms")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    what = sys.argv[1]
    if what == "account-flood":
        url, pid, target, other, pw = sys.argv[2:7]
        n = int(sys.argv[7]) if len(sys.argv) > 7 else 300
        addrs = int(sys.argv[8]) if len(sys.argv) > 8 else 200
        seconds = float(sys.argv[9]) if len(sys.argv) > 9 else 60
        asyncio.run(account_flood(url, int(pid), target, other, pw, n, addrs, seconds))
    elif what == "webhooks":
        url, key_a, key_b = sys.argv[2:5]
        dead_n = int(sys.argv[5]) if len(sys.argv) > 5 else 50
        seconds = float(sys.argv[6]) if len(sys.argv) > 6 else 60
        asyncio.run(webhooks(url, key_a, key_b, dead_n, seconds))
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
