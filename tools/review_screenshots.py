"""Screenshots of ``m3kit review``'s main screens for the README, taken in Debian's headless
Chromium on a tiny synthetic egocentric suite (nothing else is needed).

    python tools/review_screenshots.py [--out docs/images] [--also DIR [--also DIR ...]]

Writes ``review_item.png`` (an item, its video paused at the end of an evidence span, the
options with their roles), ``review_rejected.png`` (a rejected item with its reason and the
list's badges) and ``review_export.png`` (the export's result), each 1280x800; with ``--also``,
``review_<benchmark>.png``: the first item of each other builder output (an M3Exam persona
folder, an annotated SuperMemory-VQA root with its verifier's checks), reviewed in a copy so
the folder itself is never written to.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from m3kit.review import open_review, serving
from m3kit.synth.ego import EgoSuiteConfig, build_ego_suite

SIZE = (1280, 800)
SUITE = EgoSuiteConfig(seed=5, persons=2, sessions=3, segments=8, fps=1.0, size=256,
                       answerable_per_skill=2, unanswerable=3)


def _chromium(profile: Path) -> WebDriver:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                "--autoplay-policy=no-user-gesture-required", f"--user-data-dir={profile}",
                f"--window-size={SIZE[0]},{SIZE[1]}"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def _until(driver: WebDriver, script: str) -> None:
    WebDriverWait(driver, 20, poll_frequency=0.05).until(lambda d: d.execute_script(script))


def _shoot(driver: WebDriver, out: Path) -> None:
    # the page's own viewport, not the window: the PNG is exactly SIZE
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": SIZE[0], "height": SIZE[1], "deviceScaleFactor": 1, "mobile": False})
    driver.save_screenshot(str(out))
    print(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/images"))
    parser.add_argument("--also", type=Path, action="append", default=[],
                        help="another builder's output to shoot the first item of")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        suite = build_ego_suite(Path(tmp) / "suite", SUITE)
        driver = _chromium(Path(tmp) / "profile")
        try:
            with serving(open_review(suite.root, "ana")) as url:
                driver.get(url)
                _until(driver, "return document.getElementById('item-id').textContent === '#1'")
                driver.find_elements("css selector", "#spans button")[1].click()
                _until(driver, "const v = document.getElementById('player');"
                               "return v.paused && v.currentTime > 33;")
                time.sleep(0.3)  # the paused frame painted
                _shoot(driver, args.out / "review_item.png")
                body = driver.find_element("tag name", "body")
                body.send_keys("a")
                _until(driver, "return document.getElementById('item-id').textContent === '#2'")
                driver.find_element("id", "reason").send_keys("the vague option is right too")
                driver.find_element("id", "reject").click()
                _until(driver, "return document.getElementById('item-id').textContent === '#3'")
                body.send_keys("k")
                _until(driver, "return document.getElementById('item-id').textContent === '#2'")
                _shoot(driver, args.out / "review_rejected.png")
                driver.find_element("id", "export").click()
                _until(driver, "return document.getElementById('export-result')"
                               ".dataset.loaded !== undefined")
                _shoot(driver, args.out / "review_export.png")
            for n, folder in enumerate(args.also):
                copy = Path(tmp) / f"also{n}" / folder.resolve().name
                shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("review", "cache"))
                app = open_review(copy, "ana")
                with serving(app) as url:
                    driver.get(url)
                    _until(driver, "return document.getElementById('item-id')"
                                   ".textContent.startsWith('#')")
                    time.sleep(0.5)  # images and the first frame painted
                    _shoot(driver, args.out / f"review_{app.title.split(': ')[-1]}.png")
        finally:
            driver.quit()


if __name__ == "__main__":
    main()
