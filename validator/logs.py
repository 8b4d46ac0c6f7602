"""Log output of the validator process: human text or one JSON object per line.

Every duty ends in exactly one log line (:func:`log_duty`) naming the slot, the
kind of duty, the validators concerned and the result, so an operator can grep
a slot and see everything the client did for it. ``--log-format json`` writes
the same records as JSON objects (``ts``, ``level``, ``logger``, ``message`` and
the duty fields) for log shippers.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, TextIO

import orjson

DUTY_LOGGER = "validator.duties"

#: Attribute names a LogRecord always has; anything else was passed in ``extra``.
_STANDARD_ATTRIBUTES = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}
#: Validator indices shown in a text line before it says "and N more".
_TEXT_INDICES_SHOWN = 8


class LogFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts, level, logger, message, then the record's extras."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": _iso_time(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD_ATTRIBUTES and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802
        return _iso_time(record.created)


def _iso_time(created: float) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
    return f"{seconds}.{int(created % 1 * 1000):03d}Z"


def configure_logging(
    log_format: LogFormat | str = LogFormat.TEXT,
    *,
    level: int | str = logging.INFO,
    stream: TextIO | None = None,
) -> logging.Handler:
    """Send every log record of the process to ``stream`` (stderr) in ``log_format``.

    Replaces handlers set up before, so calling it twice does not double lines.
    Returns the handler (the devnet's progress display routes it through rich).
    """
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(
        JsonFormatter() if LogFormat(log_format) is LogFormat.JSON else TextFormatter()
    )
    install_handler(handler, level)
    return handler


def install_handler(handler: logging.Handler, level: int | str = logging.INFO) -> None:
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # aiohttp logs every access line at INFO; the metrics and keymanager servers would flood.
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)


def describe_indices(indices: Iterable[int]) -> str:
    ordered = sorted(indices)
    shown = ",".join(str(index) for index in ordered[:_TEXT_INDICES_SHOWN])
    if len(ordered) > _TEXT_INDICES_SHOWN:
        shown += f" and {len(ordered) - _TEXT_INDICES_SHOWN} more"
    return shown or "-"


def log_duty(
    slot: int,
    kind: str,
    validators: Iterable[int],
    result: str,
    *,
    level: int = logging.INFO,
    detail: str = "",
    fields: Mapping[str, Any] | None = None,
) -> None:
    """The one line for a duty's outcome: ``slot=12 kind=attestation validators=3,4 count=2 ...``.

    ``validators`` may repeat an index (a sync committee member aggregating for two
    subcommittees): the line names each validator once and ``count`` is the number
    of messages. In JSON the same values are separate fields (``slot``, ``kind``,
    ``validators`` as a list, ``count``, ``result``, ``detail``) plus ``fields``.
    """
    messages = list(validators)
    indices = sorted(set(messages))
    message = (
        f"slot={slot} kind={kind} validators={describe_indices(indices)} "
        f"count={len(messages)} result={result}"
    )
    if detail:
        message += f" detail={detail}"
    extra: dict[str, Any] = {
        "slot": slot,
        "kind": kind,
        "validators": indices,
        "count": len(messages),
        "result": result,
    }
    if detail:
        extra["detail"] = detail
    if fields:
        extra.update(fields)
    logging.getLogger(DUTY_LOGGER).log(level, message, extra=extra)
