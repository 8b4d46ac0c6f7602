"""Progress of long work on a terminal (rich): an import or export of a large interchange,
the decryption of many keystores.

Shown on stderr only when it is a terminal (or when asked), never in a pipe or a log
file; the callback it gives is a cheap counter update (rich redraws on its own thread a
few times a second), so the work it watches does not slow down.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Literal

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.text import Text

Unit = Literal["bytes", "keys"]


class RateColumn(ProgressColumn):
    """Items per second (rich's own speed column counts bytes)."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self._unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        shown = "?" if speed is None else f"{speed:,.0f}"
        return Text(f"{shown} {self._unit}/s", style="progress.data.speed")


@contextlib.contextmanager
def terminal_progress(
    total: int,
    description: str,
    *,
    unit: Unit = "bytes",
    show: bool | None = None,
    console: Console | None = None,
) -> Iterator[Callable[[int], None] | None]:
    """A progress bar with the count done and the rate; yields ``update(done)``, or None
    when nothing is shown (``show=None``: only when stderr is a terminal)."""
    if show is None:
        show = sys.stderr.isatty()
    if not show:
        yield None
        return
    count: ProgressColumn = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
    rate: ProgressColumn = TransferSpeedColumn() if unit == "bytes" else RateColumn(unit)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        count,
        rate,
        TimeRemainingColumn(),
        console=console or Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=total)
        yield lambda done: bar.update(task, completed=done)
