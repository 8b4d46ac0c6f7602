"""Headless chromium (Debian's ``chromium`` and ``chromium-driver``) driven by selenium."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from tests.support.debian_tools import debian_tool


@contextlib.contextmanager
def headless_chromium(width: int = 1400, height: int = 1200) -> Iterator[webdriver.Chrome]:
    """A headless chromium whose console messages ``driver.get_log("browser")`` returns."""
    binary = debian_tool("chromium", "chromium")
    driver_binary = debian_tool("chromedriver", "chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in (
        "--headless=new",
        "--no-sandbox",  # tests run as root in CI containers
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_binary))
    try:
        yield driver
    finally:
        driver.quit()
