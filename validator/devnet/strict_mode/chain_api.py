"""Strict mode: every request and reply of the devnet held to the Beacon API spec.

``validator.devnet.strict_mode.openapi_spec.StrictServerChecker`` judges each exchange (a
non-conforming request is answered 400 before any handler sees it, a
non-conforming reply is replaced by a 500 naming the violation). On top of it
every violation is logged as an error and counted in
``summary()["strict_violations"]``, so a run or test cannot miss one.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import web

from validator.devnet.beacon_api.plumbing import Handler
from validator.devnet.chain.simulated_chain import DevnetChain
from validator.devnet.strict_mode.checkers import StrictServerChecker, Violation
from validator.devnet.strict_mode.openapi_spec import load_beacon_api_spec

log = logging.getLogger("validator.devnet")


class StrictMode:
    def __init__(self, chain: DevnetChain, checker: StrictServerChecker) -> None:
        self.chain = chain
        self.checker = checker
        self._reported = 0

    @classmethod
    async def load(cls, chain: DevnetChain) -> StrictMode:
        """Load the spec (about a second, in a worker thread)."""
        spec = await asyncio.to_thread(load_beacon_api_spec)
        return cls(chain, StrictServerChecker(spec))

    @property
    def violations(self) -> list[Violation]:
        return list(self.checker.violations)

    def middlewares(self) -> list[Any]:
        @web.middleware
        async def report_violations(request: web.Request, handler: Handler) -> web.StreamResponse:
            try:
                return await handler(request)
            finally:
                self._report()

        return [report_violations, self.checker.middleware]

    def _report(self) -> None:
        for violation in self.checker.violations[self._reported :]:
            log.error("STRICT MODE VIOLATION: %s", violation)
            self.chain.ledger.count("strict_violations")
        self._reported = len(self.checker.violations)
