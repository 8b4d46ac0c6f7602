"""The ``--metrics`` endpoint: Prometheus text on ``/metrics``, served in-process by aiohttp.

It exposes the default prometheus-client registry, where every part of the
client registers its ``validator_*`` metrics (Beacon API requests, the signer,
the slashing-protection record, duties); docs/metrics.md lists them. Given a
status page (``validator run --status-page``), it also serves that page at ``/``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest

from keymanager.api.server_limits import DEFAULT_LIMITS, ServerLimits, start_limited_site

log = logging.getLogger("validator.metrics")

DEFAULT_METRICS_ADDRESS = "127.0.0.1"
DEFAULT_METRICS_PORT = 5064
#: Sent with the status page: nothing but the page and its inline style may load.
STATUS_PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


class MetricsServer:
    """``await start()`` binds and returns the port (0 picks a free one); ``await stop()``."""

    def __init__(
        self,
        address: str = DEFAULT_METRICS_ADDRESS,
        port: int = DEFAULT_METRICS_PORT,
        *,
        registry: CollectorRegistry = REGISTRY,
        limits: ServerLimits = DEFAULT_LIMITS,
        status_page: Callable[[], Awaitable[str]] | None = None,
    ) -> None:
        self.address = address
        self.port = port
        self._registry = registry
        self._limits = limits
        self._status_page = status_page
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        if self._status_page is not None:
            app.router.add_get("/", self._page)
        return app

    async def _page(self, request: web.Request) -> web.Response:
        assert self._status_page is not None
        response = web.Response(text=await self._status_page(), content_type="text/html")
        response.headers["Content-Security-Policy"] = STATUS_PAGE_POLICY
        response.headers["Cache-Control"] = "no-store"
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    async def _metrics(self, request: web.Request) -> web.Response:
        # Rendering walks every metric; off the loop so a large registry never delays a duty.
        body = await asyncio.to_thread(generate_latest, self._registry)
        response = web.Response(body=body)
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response

    async def start(self) -> int:
        runner = web.AppRunner(self.app(), access_log=None, **self._limits.runner_options())
        await runner.setup()
        try:  # server_limits.py: connection cap and head timeout
            site = await start_limited_site(runner, self.address, self.port, self._limits)
        except OSError as error:
            await runner.cleanup()
            raise OSError(
                f"cannot serve metrics on {self.address}:{self.port}: {error.strerror or error}"
            ) from None
        self._runner = runner
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        if sockets:
            self.port = sockets[0].getsockname()[1]
        log.info("metrics on http://%s:%d/metrics", self.address, self.port)
        if self._status_page is not None:
            log.info("status page on http://%s:%d/", self.address, self.port)
        return self.port

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
