#!/usr/bin/env python3
"""The box's web page attacked as a hostile client on the room's network
would: a pairing code guessed from thousands of addresses, unpaired clients
sending big bodies, slow connections and idle event streams holding every
slot, requests naming another host or none. Each check prints PASS or FAIL
with what it measured; exits 1 if any failed.

Usage: attacks.py URL CODE BOX_PID LOG SINGER_ADDRESS ATTACKER_ADDRESS...
  URL: the page (http://HOST:PORT) as the singer reaches it from
  SINGER_ADDRESS (an address of this machine the box sees as another
  client); the attackers connect from ATTACKER_ADDRESS... (addresses of
  this machine, each a client group of its own) and from the loopback /8.
"""
import http.client
import json
import os
import random
import socket
import sys
import threading
import time

url, code, box_pid, log_path, singer = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
attackers = sys.argv[6:]
host, port = url.split("//")[1].split(":")
port = int(port)
failed = False


def check(ok, text):
    global failed
    print(("PASS " if ok else "FAIL ") + text, flush=True)
    if not ok:
        failed = True


def rss_kb(field="VmRSS"):
    with open(f"/proc/{box_pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def request(method, path, body=None, headers=None, source=None, timeout=10):
    connection = http.client.HTTPConnection(host, port, timeout=timeout, source_address=(source, 0) if source else None)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        return response.status, dict(response.getheaders()), data
    finally:
        connection.close()


def pair(source):
    status, headers, body = request("POST", "/api/pair", body=code, source=source)
    if status != 200:
        return None
    cookie = headers["Set-Cookie"].split(";")[0]
    return cookie, json.loads(body)["csrf"]


def singer_served(session):
    """The singer's page, paired, from its own address: the state and an action."""
    try:
        status, _, _ = request("GET", "/api/state", headers={"Cookie": session[0]}, source=singer, timeout=5)
        return status == 200
    except OSError:
        return False


def served_for(seconds, served_once):
    """How often a paired page was served, and refused, asking every half second for `seconds`."""
    served = refused = 0
    started = time.time()
    while time.time() - started < seconds:
        if served_once():
            served += 1
        else:
            refused += 1
        time.sleep(0.5)
    return served, refused


# The singer pairs first (the real client, from the room's network).
session = pair(singer)
check(session is not None, f"the singer paired from {singer}")
# A second page, paired from the loopback /8 (a client group many attackers below share).
own = pair("127.0.0.1")
check(own is not None, "a second page paired from 127.0.0.1")
base_rss = rss_kb()

# 1. Hosts: a request naming no host, or another one (DNS rebinding), is refused.
def raw(lines, source=None):
    sock = socket.create_connection((host, port), timeout=5, source_address=(source, 0) if source else None)
    sock.sendall(lines.encode())
    answer = sock.recv(200).decode(errors="replace")
    sock.close()
    return answer.split("\r\n")[0]

answer = raw("GET /api/state HTTP/1.0\r\n\r\n", singer)
check(" 400 " in answer, f"no Host header: {answer}")
status, _, _ = request("GET", "/api/state", headers={"Host": "evil.example", "Cookie": session[0]}, source=singer)
check(status == 403, f"Host: evil.example (a rebound name), paired: {status}")

# 2. Guessing the code from the loopback /8's many addresses, then from every attacker address.
guesses = wrong = paused = 0
first_pause_after = None
deadline = time.time() + 12
sources = [f"127.{random.randrange(256)}.{random.randrange(256)}.{random.randrange(1, 255)}" for _ in range(4000)] + attackers * 50
random.shuffle(sources)
for source in sources:
    if time.time() > deadline:
        break
    guess = f"{random.randrange(1_000_000):06d}"
    if guess == code:
        continue
    try:
        status, _, answer = request("POST", "/api/pair", body=guess, source=source, timeout=3)
    except OSError:
        continue
    guesses += 1
    if status == 403:
        wrong += 1
    elif status == 429:
        paused += 1
        if first_pause_after is None and b"new code" in answer:
            first_pause_after = wrong + 1
    elif status == 200:
        check(False, f"a guess paired: {guess}")
check(first_pause_after is not None and first_pause_after <= 20,
      f"pairing guesses before the code is replaced: {first_pause_after}; {wrong} codes tried in all in 12 s from {len(set(sources))} addresses "
      f"({guesses - wrong} of {guesses} requests told to wait; before, 155,211 were tried in 57 s)")
time.sleep(0.5)
log = open(log_path, errors="replace").read()
check("someone is guessing the page's pairing code; the new code is" in log and "wrong pairing code" in log,
      "the box says someone is guessing, logs the wrong codes and shows a new code")
new_code = log.rsplit("the new code is ", 1)[-1].split()[0] if "the new code is" in log else code
check(new_code != code, f"the code changed: {code} → {new_code}")
check(singer_served(session), "the singer's paired page still works meanwhile")


# 3. Unpaired clients sending big bodies: refused before a byte of them is held.
def big_post(source, results):
    try:
        sock = socket.create_connection((host, port), timeout=10, source_address=(source, 0))
        sock.sendall(f"POST /api/upload HTTP/1.1\r\nHost: {host}\r\nContent-Length: {8 << 20}\r\nX-File-Name: x.acasong\r\n\r\n".encode())
        chunk = b"x" * 65536
        sent = 0
        try:
            while sent < (8 << 20):
                sock.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass
        answer = sock.recv(100).decode(errors="replace").split("\r\n")[0]
        results.append((sent, answer))
        sock.close()
    except OSError as error:
        results.append((0, str(error)))

results = []
threads = [threading.Thread(target=big_post, args=(source, results)) for source in (attackers * 4 + ["127.0.0.1"] * 16)[:64]]
peak = base_rss
for thread in threads:
    thread.start()
while any(thread.is_alive() for thread in threads):
    peak = max(peak, rss_kb())
    time.sleep(0.05)
refused = sum(1 for _, answer in results if " 401 " in answer or "reset" in answer.lower() or answer == "")
check((peak - base_rss) < 32 * 1024,
      f"64 unpaired clients each sending an 8 MB upload: the box held {max(0, peak - base_rss) // 1024} MB more at most (was 900 MB); {refused} of 64 refused or cut off")
check(singer_served(session), "the singer's page still works after them")


# 3b. The paired singer's own uploads, 16 held open at once with 1 MB of
# each sent (a phone on a bad connection): their bodies go to the box's disk
# as they arrive, never into its memory (130 MB before).
def held_upload(results, hold):
    try:
        sock = socket.create_connection((host, port), timeout=30, source_address=(singer, 0))
        sock.sendall((f"POST /api/upload HTTP/1.1\r\nHost: {host}\r\nCookie: {session[0]}\r\nX-CSRF-Token: {session[1]}\r\n"
                      f"X-File-Name: held.musicxml\r\nContent-Length: {4 << 20}\r\n\r\n").encode())
        for _ in range(16):
            sock.sendall(b"<" + b"x" * 65535)
        hold.wait(20)
        sock.close()
        results.append(True)
    except OSError:
        results.append(False)

before = rss_kb()
held, hold = [], threading.Event()
threads = [threading.Thread(target=held_upload, args=(held, hold)) for _ in range(16)]
for thread in threads:
    thread.start()
time.sleep(4)
holding = rss_kb()
hold.set()
for thread in threads:
    thread.join()
check((holding - before) < 8 * 1024, f"16 uploads held open by the paired singer, 1 MB of each sent: the box {before // 1024} MB before, {holding // 1024} MB while they were held "
      f"(bodies on the box's disk; 130 MB before)")
check(singer_served(session), "the singer's page still works after them")


# 4. Slow connections: every slot the attackers can get, a byte every 2 s.
slow = []
stop = threading.Event()

def slow_client(source):
    try:
        sock = socket.create_connection((host, port), timeout=30, source_address=(source, 0))
    except OSError:
        return
    slow.append(sock)
    try:
        sock.sendall(b"GET /api/state HTTP/1.1\r\n")
        while not stop.is_set():
            sock.sendall(b"X")
            stop.wait(2)
    except OSError:
        pass

slow_threads = [threading.Thread(target=slow_client, args=(source,)) for source in (attackers + ["127.0.0.1", "127.0.0.2"]) * 8][:64]
for thread in slow_threads:
    thread.start()
time.sleep(1)
served, refused_singer = served_for(25, lambda: singer_served(session))
cut = 0
for sock in slow:
    try:
        sock.settimeout(0.1)
        if sock.recv(1) == b"":
            cut += 1
    except socket.timeout:
        pass
    except OSError:
        cut += 1
stop.set()
check(refused_singer == 0, f"64 slow connections (a byte every 2 s): the paired singer served {served} times in 25 s, refused {refused_singer} times (goal: never); "
      f"all {cut} of them shut by the box (refused at once past each address's 4, or at the 10 s deadline for a request head)")

# 4b. Slow connections from the paired page's own client group (the phones
# of one IPv6 /64 are one group; here the loopback /8): a page paired from
# 127.0.0.1 against 64 slow connections from 127.0.200-203.x. The box shuts
# the slowest of them to make room: the paired page is never refused.
stop.set()
for sock in slow:
    sock.close()
slow = []
stop = threading.Event()

def own_served():
    try:
        status, _, _ = request("GET", "/api/state", headers={"Cookie": own[0]}, source="127.0.0.1", timeout=5)
        return status == 200
    except OSError:
        return False

group_threads = [threading.Thread(target=slow_client, args=(f"127.0.{200 + n // 16}.{1 + n % 16}",)) for n in range(64)]
for thread in group_threads:
    thread.start()
time.sleep(1)
served_own, refused_own = served_for(20, lambda: bool(own) and own_served())
stop.set()
check(refused_own == 0, f"64 slow connections from the paired page's own client group: the page served {served_own} times in 20 s, "
      f"refused {refused_own} times (goal: never; was 34 refusals in 40 s)")

# 4c. Slow readers: 10 unpaired addresses with 4 connections each, every one
# asking for the page's font 12 times over and reading it a few bytes at a
# time. Their answers go on for ever; they may be shut to make room, and
# the groups no page paired from share 40 connections: the singer is served.
stop = threading.Event()
readers = []

def slow_reader(source):
    try:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        sock.settimeout(30)
        sock.bind((source, 0))
        sock.connect((host, port))
        sock.sendall(f"GET /GentiumBookPlus-Regular.ttf HTTP/1.1\r\nHost: {host}\r\n\r\n".encode() * 12)
        readers.append(sock)
        while not stop.is_set():
            if not sock.recv(64):
                return
            stop.wait(3)
    except OSError:
        pass

reader_threads = [threading.Thread(target=slow_reader, args=(source,)) for source in attackers[:10] for _ in range(4)]
for thread in reader_threads:
    thread.start()
time.sleep(2)
served, refused = served_for(20, lambda: singer_served(session))
stop.set()
for sock in readers:
    sock.close()
check(refused == 0, f"40 connections reading the page's font a few bytes at a time: the singer served {served} times in 20 s, refused {refused} times (goal: never)")

# 4d. A paired page that opens connection after connection (a choir member's
# phone gone wrong, or someone who saw the code): its group holds 32 at
# most, and the singer, paired from elsewhere, is served.
greedy = own  # paired at the start from the loopback /8 (pairing from it now is refused: the guesses above came from there)
held = []
for n in range(64):
    try:
        connection = http.client.HTTPConnection(host, port, timeout=3, source_address=(f"127.0.1.{1 + n % 8}", 0))
        connection.request("GET", "/api/state", headers={"Cookie": greedy[0]} if greedy else {})
        answer = connection.getresponse()
        answer.read()
        if answer.status == 200:
            held.append(connection)
    except OSError:
        pass
check(bool(own) and 8 <= len(held) <= 32 and singer_served(session),
      f"one paired group opening 64 connections: {len(held)} kept (32 at most: a room of phones on one IPv6 /64 shares them), the singer still served")
for connection in held:
    connection.close()
new_session = pair(singer) if new_code == code else None
status, _, _ = request("POST", "/api/pair", body="000000", source=singer)
check(status in (403, 429), f"a new client can still reach the pairing page meanwhile ({status})")

# 5. Event streams held open by unpaired guests (when guests may watch) or refused.
streams = []
for source in (attackers + ["127.0.0.1"]) * 8:
    try:
        sock = socket.create_connection((host, port), timeout=5, source_address=(source, 0))
        sock.sendall(f"GET /events HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        first = sock.recv(64).decode(errors="replace").split("\r\n")[0]
        streams.append((sock, first))
    except OSError:
        pass
open_streams = sum(1 for _, first in streams if " 200 " in first)
check(open_streams <= 8, f"{len(streams)} event streams asked for without pairing: {open_streams} open (guests: 8 at most, 2 per address)")
check(singer_served(session), "the singer's page still works with them open")
for sock, _ in streams:
    sock.close()
for sock in slow:
    sock.close()
print(f"memory: the box {rss_kb() // 1024} MB now, {rss_kb('VmHWM') // 1024} MB at its peak (started at {base_rss // 1024} MB)")
sys.exit(1 if failed else 0)
