"""The review app as a person uses it, in a real headless Chromium (Selenium, Debian's
``/usr/bin/chromium`` and ``/usr/bin/chromedriver``): open the page on the synthetic egocentric
suite, play an evidence span (the video seeks to it and pauses by its end), edit an option,
reject one item with a reason, accept the rest with the keyboard, export with the button, and
load the export with the benchmark's loader."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from m3kit.benchmarks.supermemory.load import load_supermemory
from m3kit.review import open_review, serving

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WAIT_S = 20.0

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()),
                       reason="needs Debian's chromium and chromium-driver "
                              "(/usr/bin/chromium, /usr/bin/chromedriver)"),
]
webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (the dev extra)")


def chromium(profile: Path, size: tuple[int, int] = (1280, 800)) -> WebDriver:
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                "--autoplay-policy=no-user-gesture-required", f"--user-data-dir={profile}",
                f"--window-size={size[0]},{size[1]}"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[WebDriver]:
    driver = chromium(tmp_path / "profile")
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(tmp_path / "profile", ignore_errors=True)


def _wait(driver: WebDriver, condition: Callable[[WebDriver], object], message: str) -> object:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S, poll_frequency=0.05).until(condition, message)


def _progress(driver: WebDriver) -> int:
    return int(driver.find_element("id", "progress").get_attribute("data-reviewed") or -1)


def _current_id(driver: WebDriver) -> str:
    return driver.find_element("id", "item-id").text.lstrip("#")


def test_review_in_a_browser(browser: WebDriver, suite_root: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    driver = browser
    with serving(open_review(suite_root, "tester")) as url:
        driver.get(url)
        _wait(driver, lambda d: _current_id(d) == "1", "the first item did not open")
        total = int(driver.find_element("id", "progress").get_attribute("data-total"))
        assert total == 30

        # play evidence span 2 of item 1 (P1_D1 36-42 s): it seeks there, plays, pauses by 42
        spans = driver.find_elements("css selector", "#spans button")
        assert len(spans) == 3
        start = float(spans[1].get_attribute("data-start"))
        end = float(spans[1].get_attribute("data-end"))
        spans[1].click()
        _wait(driver, lambda d: d.execute_script(
            "const v = document.getElementById('player');"
            f"return !v.paused && v.currentTime >= {start} && v.currentTime < {end};"),
            "the video did not play within the span")
        _wait(driver, lambda d: d.execute_script(
            "return document.getElementById('player').paused"), "the video did not pause")
        state = driver.execute_script(
            "const v = document.getElementById('player');"
            "return [v.currentTime, v.error && v.error.message, v.videoWidth];")
        assert start < state[0] <= end + 0.05, state
        assert state[1] is None and state[2] > 0  # decoded: H.264 plays in this Chromium

        # edit option A of item 1 and save with Ctrl+S
        option = driver.find_element("css selector", "#options input[data-letter=A]")
        option.clear()
        option.send_keys("Edited in the browser")
        ActionChains(driver).key_down(Keys.CONTROL).send_keys("s").key_up(Keys.CONTROL).perform()
        _wait(driver, lambda d: "saved" in d.find_element("id", "status").text,
              "the edit was not saved")

        # reject item 2 with a reason: r focuses the reason, Enter rejects and moves on
        body = driver.find_element("tag name", "body")
        body.send_keys("j")
        _wait(driver, lambda d: _current_id(d) == "2", "j did not go to item 2")
        body.send_keys("r")
        reason = driver.switch_to.active_element
        assert reason.get_attribute("id") == "reason"
        reason.send_keys("the vague option is right too", Keys.ENTER)
        _wait(driver, lambda d: _current_id(d) == "3", "rejecting did not move on")
        assert _progress(driver) == 1

        # back to item 1 (k twice) and accept the rest with the keyboard
        body = driver.find_element("tag name", "body")
        body.send_keys("k")
        _wait(driver, lambda d: _current_id(d) == "2", "k did not go back")
        body.send_keys("k")
        _wait(driver, lambda d: _current_id(d) == "1", "k did not go back")
        assert driver.find_element("css selector", "#options input[data-letter=A]") \
            .get_attribute("value") == "Edited in the browser"  # the saved edit is shown
        for _ in range(total):
            current = _current_id(driver)
            body = driver.find_element("tag name", "body")
            if current == "2":  # the rejected one stays rejected
                body.send_keys("j")
                _wait(driver, lambda d: _current_id(d) == "3", "j did not skip item 2")
                continue
            body.send_keys("a")
            if current == str(total):
                _wait(driver, lambda d: _progress(d) == total, "the last accept was not kept")
                break
            _wait(driver, lambda d, c=current: _current_id(d) != c, f"a did not leave {current}")
        assert _progress(driver) == total

        driver.find_element("id", "export").click()
        _wait(driver, lambda d: d.find_element("id", "export-result")
              .get_attribute("data-loaded") is not None, "the export did not finish")
        result = driver.find_element("id", "export-result")
        assert result.get_attribute("data-exported") == "29"
        assert result.get_attribute("data-loaded") == "29"
        assert result.get_attribute("data-skipped") == "0"
        listed_verdicts = driver.execute_script(
            "return [...document.querySelectorAll('#list .entry .badge')]"
            ".map(b => b.textContent)")
        assert listed_verdicts.count("rejected") == 1

    exported = load_supermemory(suite_root / "review" / "export")
    assert exported.skipped == []
    by_id = {q.id: q for q in exported.questions}
    assert "2" not in by_id and len(by_id) == 29
    assert by_id["1"].choices[0].text == "Edited in the browser"
