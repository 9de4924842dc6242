#!/usr/bin/env python3
"""The box's web page in a real browser (Debian's chromium and chromedriver,
driven by Selenium) against the box in the simulated room.

  Tests/web/browser-tests.py ACAPELLA SCREENSHOT_DIR

Starts `acapella run` on a free port, reads the pairing code from what the
box prints, and checks: a wrong code is refused on the page; the right code
pairs; play from the page's button and the cursor passes measures 1, 2, 3 in
order on the score; stop from the page. Screenshots of each step go to
SCREENSHOT_DIR (not committed). Exit status 1 on any failure.
"""
import os, random, re, subprocess, sys, tempfile, time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

failures = 0


def check(name, condition, detail=""):
    global failures
    if condition:
        print(f"PASS {name}")
    else:
        failures += 1
        print(f"FAIL {name}" + (f": {detail}" if detail else ""))


def main():
    acapella, shots = sys.argv[1], sys.argv[2]
    os.makedirs(shots, exist_ok=True)
    port = random.randint(20000, 40000)
    data = tempfile.mkdtemp()
    err = open(os.path.join(data, "box.err"), "w+")
    box = subprocess.Popen([acapella, "run", "--data", data, "--seconds", "60", "--device", "sim:speed=1", "--web", str(port)],
                           stdout=subprocess.DEVNULL, stderr=err)
    try:
        code = None
        for _ in range(100):
            err.seek(0)
            match = re.search(r"pairing code (\d{6})", err.read())
            if match:
                code = match.group(1)
                break
            time.sleep(0.1)
        check("the box prints its pairing code", code is not None)
        if code is None:
            return 1
        options = Options()
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=900,1200"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            driver.get(f"http://127.0.0.1:{port}/")
            time.sleep(0.5)
            check("the page asks for the code", driver.find_element(By.ID, "pair").is_displayed())
            field = driver.find_element(By.ID, "code")
            field.send_keys("000000" if code != "000000" else "111111")
            driver.find_element(By.CSS_SELECTOR, "#pair-form button").click()
            time.sleep(0.5)
            check("a wrong code is refused", "wrong code" in driver.find_element(By.ID, "pair-error").text,
                  driver.find_element(By.ID, "pair-error").text)
            driver.save_screenshot(os.path.join(shots, "1-pairing.png"))
            field.clear()
            field.send_keys(code)
            driver.find_element(By.CSS_SELECTOR, "#pair-form button").click()
            for _ in range(50):
                if driver.find_elements(By.CSS_SELECTOR, "#score svg") and driver.find_elements(By.ID, "cursor"):
                    break
                time.sleep(0.1)
            check("paired: the score is on the page", bool(driver.find_elements(By.CSS_SELECTOR, "#score svg")))
            check("the session cookie is not readable by scripts", driver.execute_script("return document.cookie") == "")
            driver.save_screenshot(os.path.join(shots, "2-score.png"))
            driver.find_element(By.CSS_SELECTOR, 'button[data-action="play-pause"]').click()
            seen = []
            deadline = time.time() + 20
            while time.time() < deadline and not set([1, 2, 3]) <= set(seen):
                measure = driver.execute_script("const c = document.getElementById('cursor'); return c ? Number(c.dataset.measure) : null")
                if measure is not None and (not seen or seen[-1] != measure):
                    seen.append(measure)
                time.sleep(0.05)
            in_order = [m for m in seen if m in (1, 2, 3)]
            check("the cursor passes measures 1, 2, 3 in order", in_order[:3] == [1, 2, 3], f"measures seen {seen}")
            driver.save_screenshot(os.path.join(shots, "3-playing.png"))
            driver.find_element(By.CSS_SELECTOR, 'button[data-action="stop"]').click()
            time.sleep(0.6)
            check("stopped from the page", driver.find_element(By.ID, "transport").text == "stopped",
                  driver.find_element(By.ID, "transport").text)
        finally:
            driver.quit()
    finally:
        box.terminate()
        box.wait(timeout=20)
    print(f"browser: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
