#!/usr/bin/env python3
"""The web page's four measures, for `acapella-bench web` (which runs this
with the box beside it and a generated 3-minute song):

  Tools/web-bench.py --acapella BIN --song LONG.acasong [--seconds S]

1. Cursor accuracy: the song sample the page's cursor shows at each frame
   against the engine's at the same moment (the line through the samples
   the box published, each stamped with CLOCK_MONOTONIC when published).
2. State to page: publication → the event handled in the browser.
   The page's clock (performance.now, CLOCK_MONOTONIC underneath) is tied
   to this process's time.monotonic by the round trip of a script call
   (the shortest of 40, half of it the uncertainty).
3. Load: a punch-in recorded quiet, then again with 10 clients streaming
   events and 2 downloading mixdowns: the render times the box logs for
   each run (p99.9 against the 3 % budget, periods over their time),
   dropouts in the takes, and the lag between the two takes (0: aligned).
4. First paint of the 3-minute song's score after a reload of the paired page.

Needs Debian's chromium, chromium-driver, python3-selenium, python3-numpy
(the test suite's packages).
"""
import argparse, http.client, json, os, random, re, signal, statistics, subprocess, sys, tempfile, threading, time

import numpy
from scipy.io import wavfile
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By


class Box:
    """`acapella run` in the simulated room, serving its page."""

    def __init__(self, acapella, data, song=None, seconds=300):
        self.port = random.randint(20000, 40000)
        self.data = data
        self.err_path = os.path.join(data, f"box-{self.port}.err")
        os.makedirs(data, exist_ok=True)
        self.err = open(self.err_path, "w+")
        words = [acapella, "run", "--data", data, "--seconds", str(seconds), "--device", "sim:speed=1", "--web", str(self.port)]
        if song:
            words += ["--song", song]
        self.process = subprocess.Popen(words, stdout=subprocess.DEVNULL, stderr=self.err, stdin=subprocess.DEVNULL)
        self.code = None
        for _ in range(300):
            match = re.search(r"pairing code (\d{6})", self.log())
            if match and "ready:" in self.log():
                self.code = match.group(1)
                break
            time.sleep(0.1)
        if self.code is None:
            self.process.kill()
            raise SystemExit(f"the box did not start: {self.log()[-400:]}")
        self.cookie = None
        self.csrf = None

    def log(self):
        with open(self.err_path) as handle:
            return handle.read()

    def request(self, method, path, body=None, headers=None, read=True):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        all_headers = dict(headers or {})
        if self.cookie:
            all_headers["Cookie"] = self.cookie
        if self.csrf and method == "POST":
            all_headers["X-CSRF-Token"] = self.csrf
        connection.request(method, path, body=body, headers=all_headers)
        response = connection.getresponse()
        if not read:
            return response
        data = response.read()
        connection.close()
        return response.status, response.getheader("Set-Cookie"), data

    def pair(self):
        status, cookie, data = self.request("POST", "/api/pair", body=self.code)
        self.cookie = cookie.split(";")[0]
        self.csrf = json.loads(data)["csrf"]

    def state(self):
        return json.loads(self.request("GET", "/api/state")[2])

    def post(self, path, body):
        status, _, data = self.request("POST", path, body=body)
        return status, json.loads(data)

    def wait_for(self, state, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if self.state()["state"] == state:
                return True
            time.sleep(0.1)
        return False

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        return self.log()


def browser():
    options = Options()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=900,1200"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def pair_page(driver, box):
    driver.get(f"http://127.0.0.1:{box.port}/")
    field = driver.find_element(By.ID, "code")
    for _ in range(50):
        if field.is_displayed():
            break
        time.sleep(0.1)
    field.send_keys(box.code)
    driver.find_element(By.CSS_SELECTOR, "#pair-form button").click()
    for _ in range(100):
        if driver.find_elements(By.CSS_SELECTOR, "#score svg"):
            return
        time.sleep(0.1)
    raise SystemExit("the page did not show the score")


def clock_offset(driver):
    """time.monotonic() ms − performance.now() ms, from the quickest of 40 round trips."""
    best = None
    for _ in range(40):
        before = time.monotonic()
        page = driver.execute_script("return performance.now()")
        after = time.monotonic()
        trip = (after - before) * 1000
        offset = (before + after) / 2 * 1000 - page
        if best is None or trip < best[0]:
            best = (trip, offset)
    return best[1], best[0] / 2


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


def cursor_and_delay(acapella, seconds):
    data = tempfile.mkdtemp(prefix="acapella-web-bench-")
    box = Box(acapella, data)
    driver = browser()
    try:
        pair_page(driver, box)
        offset, uncertainty = clock_offset(driver)
        driver.execute_script("window.benchEvents = []; window.benchCursor = [];")
        driver.find_element(By.ID, "play").click()
        time.sleep(seconds)
        events = driver.execute_script("return window.benchEvents")
        cursor = driver.execute_script("return window.benchCursor")
        offset_after, _ = clock_offset(driver)
        driver.find_element(By.CSS_SELECTOR, '#bar button[data-action="stop"]').click()
    finally:
        driver.quit()
        box.stop()
    playing = [e for e in events if e[3] in ("playing", "recording")]
    # The engine's song sample against the monotonic clock: the line through what it published.
    published = numpy.array([e[1] / 1e6 for e in playing])
    samples = numpy.array([e[2] for e in playing], dtype=float)
    slope, intercept = numpy.polyfit(published, samples, 1)
    residual = numpy.abs(samples - (slope * published + intercept)).max() / 48
    offset = (offset + offset_after) / 2
    start, end = published.min(), published.max()
    errors = [abs(c[1] - (slope * (c[0] + offset) + intercept)) / 48 for c in cursor if start <= c[0] + offset <= end]
    delays = [e[0] + offset - e[1] / 1e6 for e in events if e[1] > 0]
    rate = len(playing) / (end - start) * 1000
    return {
        "cursor_p50": percentile(errors, 0.5), "cursor_p95": percentile(errors, 0.95), "cursor_frames": len(errors),
        "delay_p50": percentile(delays, 0.5), "delay_p95": percentile(delays, 0.95), "events": len(delays), "rate": rate,
        "slope": slope * 1000, "fit": residual, "uncertainty": uncertainty,
    }


def render_line(log):
    lines = [line for line in log.splitlines() if "render: " in line]
    return lines[-1].split("render: ", 1)[1] if lines else "(no render summary logged)"


def record_punch(box, measures):
    box.pair()
    status, reply = box.post("/api/punch", measures)
    if status != 200:
        raise SystemExit(f"punch refused: {reply}")
    box.post("/api/action", "record")
    if not box.wait_for("review", 60):
        raise SystemExit(f"the punch did not end in review: {box.state()}")
    box.post("/api/action", "keep-take")


def take_audio(project, take):
    _, frames = wavfile.read(os.path.join(project, take["file"]))  # takes are 32-bit float
    return frames.astype(float)


def load(acapella, measures):
    data = tempfile.mkdtemp(prefix="acapella-web-bench-load-")
    quiet = Box(acapella, data)
    record_punch(quiet, measures)
    quiet_render = render_line(quiet.stop())

    loaded = Box(acapella, data)
    loaded.pair()
    stop = threading.Event()
    counts = {"events": 0, "downloads": 0, "download_errors": 0, "busy": 0}

    def stream():
        try:
            response = loaded.request("GET", "/events", read=False)
            while not stop.is_set():
                line = response.readline()
                if not line:
                    break
                if line.startswith(b"data: "):
                    counts["events"] += 1
        except OSError:
            pass  # the box stopping

    def download():
        while not stop.is_set():
            try:
                status, _, data = loaded.request("GET", "/download/mix.wav")
            except OSError:
                status, data = 0, b""
            if stop.is_set():
                break
            if status == 200 and len(data) > 44:
                counts["downloads"] += 1
            elif status == 503:
                counts["busy"] += 1  # two renders at once already: the box said so
            else:
                counts["download_errors"] += 1

    threads = [threading.Thread(target=stream, daemon=True) for _ in range(10)] + [threading.Thread(target=download, daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    time.sleep(1)
    started = time.time()
    record_punch(loaded, measures)
    seconds = time.time() - started
    stop.set()
    loaded_render = render_line(loaded.stop())

    project = os.path.join(data, "projects", "amazing-grace.acaproj")
    with open(os.path.join(project, "manifest.json")) as handle:
        takes = json.load(handle)["takes"]
    first, second = takes[0], takes[1]
    a, b = take_audio(project, first), take_audio(project, second)
    # Song sample s is take frame s + alignmentOffsetSamples (+ nudge): both on the song's timeline.
    start = max(first["range"][0], second["range"][0])
    end = min(first["range"][1], second["range"][1])
    offset_a = first["alignmentOffsetSamples"] + first["nudgeSamples"]
    offset_b = second["alignmentOffsetSamples"] + second["nudgeSamples"]
    x = a[start + offset_a:end + offset_a]
    lags = range(-480, 481)
    scores = [numpy.dot(x, b[start + offset_b + lag:end + offset_b + lag]) for lag in lags]
    lag = list(lags)[int(numpy.argmax(scores))]
    dropouts = sum(len(t.get("dropouts", [])) for t in (first, second))
    return {"quiet": quiet_render, "loaded": loaded_render, "lag": lag, "dropouts": dropouts, "seconds": seconds, **counts}


def first_paint(acapella, song, repeats=5):
    data = tempfile.mkdtemp(prefix="acapella-web-bench-paint-")
    box = Box(acapella, data, song=song)
    box.pair()
    driver = browser()
    times = []
    try:
        pair_page(driver, box)
        for _ in range(repeats):
            driver.get(f"http://127.0.0.1:{box.port}/")
            for _ in range(100):
                mark = driver.execute_script("const m = performance.getEntriesByName('score-painted'); return m.length ? m[0].startTime : null")
                if mark is not None:
                    times.append(mark)
                    break
                time.sleep(0.05)
        size = len(box.request("GET", "/score.svg")[2])
    finally:
        driver.quit()
        box.stop()
    return {"median": statistics.median(times), "worst": max(times), "runs": len(times), "svg_kb": size / 1024}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--acapella", required=True)
    parser.add_argument("--song", required=True)
    parser.add_argument("--seconds", type=float, default=12)
    arguments = parser.parse_args()

    c = cursor_and_delay(arguments.acapella, arguments.seconds)
    print(f"  cursor     p50 {c['cursor_p50']:5.1f} ms   p95 {c['cursor_p95']:5.1f} ms   goal p95 <= 20 ms   "
          f"({c['cursor_frames']} frames; page clock tied within {c['uncertainty']:.1f} ms; engine {c['slope']:.0f} samples/s, "
          f"published samples within {c['fit']:.1f} ms of their line)")
    print(f"  to page    p50 {c['delay_p50']:5.1f} ms   p95 {c['delay_p95']:5.1f} ms   goal p95 <= 50 ms   "
          f"({c['events']} events, {c['rate']:.0f} a second while playing)")
    l = load(arguments.acapella, "1-6")
    print(f"  load       10 event streams ({l['events']} events) + 2 mixdown downloads ({l['downloads']} done, "
          f"{l['download_errors']} failed, {l['busy']} told busy) while recording mm. 1-6 ({l['seconds']:.0f} s)")
    print(f"    quiet    {l['quiet']}")
    print(f"    loaded   {l['loaded']}")
    print(f"    takes    dropouts {l['dropouts']}; the loaded take against the quiet one: lag {l['lag']} samples   goal 0")
    p = first_paint(arguments.acapella, arguments.song)
    print(f"  paint      3-minute song: median {p['median']:.0f} ms, worst {p['worst']:.0f} ms of {p['runs']} reloads "
          f"(score {p['svg_kb']:.0f} KiB)   goal <= 1000 ms")


if __name__ == "__main__":
    main()
