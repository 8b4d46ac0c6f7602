"""Bounds on what idle or slow clients can hold in an aiohttp server of the validator.

Without them, anyone on the host could open sockets to the Keymanager or metrics port
(no token needed) until the process ran out of file descriptors, and then the record's
writes and the beacon node's connections failed. So each server gets:

* a connection cap (`ServerLimits.max_connections`, and never more than an eighth of
  the process's descriptor limit): a connection over it is answered 503 and closed at
  once, so the rest of the descriptors stay free for the record, the beacon node and the
  keystores;
* a head timeout: a connection must deliver a complete request head within
  `head_timeout` seconds of connecting (or of its previous answer), else it is closed —
  this is aiohttp's keep-alive timer, which runs from the connection's start and is not
  pushed back by partial data;
* a body timeout (`body_timeout`), applied where a handler reads its body
  (`read_body`);
* log lines that cannot flood the log: a malformed request is one WARNING line without a
  traceback, and a line repeated (say asyncio's "socket.accept() out of system resource")
  is written at most once per `LOG_REPEAT_SECONDS` with a count of the ones left out.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

log = logging.getLogger("validator.server_limits")

LOG_REPEAT_SECONDS = 60.0


@dataclass(frozen=True)
class ServerLimits:
    max_connections: int = 64
    head_timeout: float = 10.0
    body_timeout: float = 30.0
    backlog: int = 128

    def connection_cap(self) -> int:
        """`max_connections`, lowered to an eighth of the descriptor limit."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY or soft <= 0:
            return self.max_connections
        return max(1, min(self.max_connections, soft // 8))

    def runner_options(self) -> dict[str, Any]:
        """Keyword arguments for `web.AppRunner` (handed to every request handler)."""
        # lingering_time: how long aiohttp keeps reading the rest of an unread body
        # after the answer before it closes the connection (its default is 10 s).
        return {"keepalive_timeout": self.head_timeout, "lingering_time": 2.0}


DEFAULT_LIMITS = ServerLimits()
LIMITS_KEY = web.AppKey("server_limits", ServerLimits)

_REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n"
    b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
)
_REFUSAL_BODY = b'{"code":503,"message":"too many connections; try again later"}'


class _RefusedConnection(asyncio.Protocol):
    """A connection over the cap: one 503 answer, then closed, holding nothing."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        transport.write(_REFUSAL % (len(_REFUSAL_BODY), _REFUSAL_BODY))
        transport.close()


class LimitedTCPSite(web.BaseSite):
    """`web.TCPSite` with the connection cap of `limits`."""

    def __init__(
        self,
        runner: web.BaseRunner,
        host: str,
        port: int,
        limits: ServerLimits,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__(runner, backlog=limits.backlog, ssl_context=ssl_context)
        self._host = host
        self._port = port
        self._cap = limits.connection_cap()

    @property
    def name(self) -> str:
        scheme = "https" if self._ssl_context is not None else "http"
        return f"{scheme}://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None
        cap = self._cap
        where = self.name

        def protocol() -> asyncio.BaseProtocol:
            if len(server.connections) >= cap:
                log.warning("%s: %d connections open, the cap; refused one more", where, cap)
                return _RefusedConnection()
            return server()

        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            protocol,
            self._host,
            self._port,
            backlog=self._backlog,
            reuse_address=True,
            ssl=self._ssl_context,
        )


async def read_body(request: web.Request) -> bytes:
    """The request's body, within the app's body timeout; TimeoutError (and the connection
    closed after the answer) when the client does not send it in time."""
    limits = request.app.get(LIMITS_KEY, DEFAULT_LIMITS)
    try:
        async with asyncio.timeout(limits.body_timeout):
            return await request.read()
    except TimeoutError:
        request.protocol.keep_alive(False)  # answer, then close the connection
        raise


class _RepeatLimit(logging.Filter):
    """Lets a message through at most once per LOG_REPEAT_SECONDS; the next one that
    passes says how many were left out."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._last: dict[tuple[str, object], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg).split("\n", 1)[0])
        now = time.monotonic()
        with self._lock:
            last, dropped = self._last.get(key, (float("-inf"), 0))
            if now - last < LOG_REPEAT_SECONDS:
                self._last[key] = (last, dropped + 1)
                return False
            self._last[key] = (now, 0)
            if len(self._last) > 1024:  # bounded even for ever-new messages
                self._last = {key: (now, 0)}
        if dropped:
            record.msg = f"{record.msg} ({dropped} more like this in the last minute not logged)"
        return True


class _MalformedRequestAsWarning(logging.Filter):
    """aiohttp logs a request it cannot parse (a NUL byte in a header, say) at ERROR with
    a traceback; that is a client's fault, so one WARNING line."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError):
            reason = " ".join(str(error.message or error).split())[:200]
            remote = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
            record.msg = "refused a malformed HTTP request from %s: %s"
            record.args = (remote, reason)
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info, record.exc_text = None, None
        return True


_installed = False
_install_lock = threading.Lock()


def install_log_limits() -> None:
    """Add the filters above to the loggers that servers under load write to (once)."""
    global _installed
    with _install_lock:
        if _installed:
            return
        _installed = True
        server_logger = logging.getLogger("aiohttp.server")
        server_logger.addFilter(_MalformedRequestAsWarning())
        server_logger.addFilter(_RepeatLimit())
        logging.getLogger("asyncio").addFilter(_RepeatLimit())
        log.addFilter(_RepeatLimit())


async def start_limited_site(
    runner: web.BaseRunner,
    host: str,
    port: int,
    limits: ServerLimits = DEFAULT_LIMITS,
    ssl_context: ssl.SSLContext | None = None,
) -> LimitedTCPSite:
    """Listen on host:port with `limits` (the runner must be set up); TLS with `ssl_context`."""
    install_log_limits()
    site = LimitedTCPSite(runner, host, port, limits, ssl_context)
    await site.start()
    return site
