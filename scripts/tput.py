#!/usr/bin/env python3
# scripts/tput.py server|client ADDR PORT SECONDS: a bounded TCP stream; the server prints
# the goodput in bit/s after a 0.3 s warm-up (test_emucluster.sh, bench_links.sh)
import socket, sys, time
mode, addr, port, sec = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
if mode == "server":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port)); s.listen(1); s.settimeout(sec)
    c, _ = s.accept(); c.settimeout(sec)
    buf = bytearray(1 << 20); n = 0; t0 = mark_t = None; mark_n = 0
    end = time.monotonic() + sec
    while time.monotonic() < end:
        k = c.recv_into(buf)
        if not k: break
        now = time.monotonic(); n += k
        if t0 is None: t0 = now
        if mark_t is None and now - t0 >= 0.3: mark_t, mark_n = now, n
    t1 = time.monotonic()
    print("%.0f" % ((n - mark_n) * 8 / (t1 - mark_t)) if mark_t and t1 - mark_t > 0.2 else "0")
else:
    give_up = time.monotonic() + 5  # a loaded machine may start the server late
    while True:
        try:
            c = socket.create_connection((addr, port), timeout=5); break
        except ConnectionRefusedError:
            if time.monotonic() > give_up: raise
            time.sleep(0.1)
    data = b"\0" * (1 << 20); end = time.monotonic() + sec
    while time.monotonic() < end: c.sendall(data)
    c.close()
