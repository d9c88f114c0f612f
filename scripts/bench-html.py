#!/usr/bin/python3
"""How large a model's HTML page is and how fast it opens, in Debian's headless chromium.

    scripts/bench-html.py PAGE.html [LOADS]

Loads the page LOADS times (default 5) from file:// in a fresh tab each time and prints its size
and, measured in the browser, the median and range over the loads of: the time from the start
of navigation until the page finished drawing itself (its script sets body[data-drawn-ms]) and
until the load event. Needs chromium, chromium-driver and python3-selenium (scripts/setup.sh).
"""
import os
import statistics
import sys

from selenium import webdriver

page = os.path.abspath(sys.argv[1])
loads = int(sys.argv[2]) if len(sys.argv) > 2 else 5
options = webdriver.ChromeOptions()
for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1500,1100"):
    options.add_argument(arg)
driver = webdriver.Chrome(options=options)
drawn, loaded = [], []
try:
    for _ in range(loads):
        driver.switch_to.new_window("tab")
        driver.get("file://" + page)  # returns after the load event
        drawn.append(float(driver.execute_script("return document.body.dataset.drawnMs")))
        loaded.append(driver.execute_script(
            "const t = performance.getEntriesByType('navigation')[0]; return t.loadEventEnd - t.startTime"))
finally:
    driver.quit()


def row(name, values):
    return f"{name} {statistics.median(values):.0f} ms (range {min(values):.0f}-{max(values):.0f}) over {loads} loads"


print(f"{os.path.basename(page)}: {os.path.getsize(page) / 1e6:.2f} MB; "
      f"{row('drawn in', drawn)}; {row('load event at', loaded)} (measured, headless chromium)")
