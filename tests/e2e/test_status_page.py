"""``validator run --status-page`` in a real headless browser: the page loads without a
console error, shows the running client's keys, tells how to resume a halted key, and
reloads itself."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from pathlib import Path

import aiohttp
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.e2e.conftest import VALIDATORS, ChainStarter, ClientStarter
from tests.support.browser import headless_chromium
from tests.support.prometheus_server import free_port
from tests.support.validators_dir import make_validators_dir
from validator.consensus.encoding import to_hex
from validator.consensus.interop import interop_keypair
from validator.halts import HaltReason, HaltStore
from validator.metrics_server import STATUS_PAGE_POLICY
from validator.status_page import REFRESH_SECONDS

pytestmark = pytest.mark.slow

#: Set to a path to keep the test's screenshot (docs/monitoring/status-page.png was made so).
SCREENSHOT_ENV = "VALIDATOR_STATUS_PAGE_SCREENSHOT"


async def test_the_status_page_in_a_browser_shows_the_keys_and_how_to_resume_a_halted_one(
    tmp_path: Path, start_chain: ChainStarter, start_client: ClientStarter
) -> None:
    directory = make_validators_dir(tmp_path / "validators", VALIDATORS)
    chain, ready = await start_chain(directory)
    halted = interop_keypair(3)[1]
    HaltStore(directory).halt(halted, HaltReason.SLASHED, "a proposer_slashing event", 2)
    port = free_port()
    client = await start_client(
        str(ready["url"]),
        directory,
        "--init-slashing-protection",
        "--status-page",
        "--metrics-port",
        str(port),
    )
    await client.published("attestation", count=6)
    await client.published("block", count=2)
    url = f"http://127.0.0.1:{port}/"
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/html")
        assert response.headers["Content-Security-Policy"] == STATUS_PAGE_POLICY

    def look() -> tuple[list[dict[str, object]], dict[str, str], str, str]:
        with headless_chromium(height=1400) as browser:
            browser.get(url)
            console = browser.get_log("browser")
            rows = {
                str(row.get_attribute("data-pubkey")): row.text
                for row in browser.find_elements(By.CSS_SELECTOR, "tr[data-pubkey]")
            }
            body = browser.find_element(By.TAG_NAME, "body").text
            shot = tmp_path / "status-page.png"
            assert browser.save_screenshot(str(shot))
            assert shot.stat().st_size > 10_000
            if os.environ.get(SCREENSHOT_ENV):
                shutil.copyfile(shot, os.environ[SCREENSHOT_ENV])
            stamp = browser.find_element(By.CSS_SELECTOR, "p.meta").text
            # It reloads itself: a later snapshot replaces this one without any action.
            WebDriverWait(browser, REFRESH_SECONDS + 6).until(
                lambda driver: driver.find_element(By.CSS_SELECTOR, "p.meta").text != stamp
            )
            console += browser.get_log("browser")
            return console, rows, body, stamp

    console, rows, body, stamp = await asyncio.to_thread(look)
    assert console == []
    assert stamp.startswith("running")
    pubkeys = [to_hex(interop_keypair(index)[1]) for index in range(VALIDATORS)]
    assert set(pubkeys) <= set(rows)
    halted_row = rows[to_hex(halted)]
    assert "halted" in halted_row and "the chain reports it slashed at epoch 2" in halted_row
    assert f"validator resume --validators-dir {directory} --pubkey {to_hex(halted)}" in halted_row
    signing_row = rows[pubkeys[0]]
    assert "active" in signing_row and "local" in signing_row
    assert re.search(r"fork \w+ · epoch \d+ · head slot \d+", body), body[:400]
    assert "finalized epoch" in body
    assert "duties per epoch" in body.lower()
    assert str(ready["url"]).removeprefix("http://") in body
    assert await client.stop() == 0
