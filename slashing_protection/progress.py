"""Progress of long work on a terminal (rich): an import or export of a large interchange,
the decryption of many keystores.

Shown on stderr only when it is a terminal (or when asked), never in a pipe or a log
file. The callback it gives passes on at most a thousand updates over the whole work and
redraws the bar itself at most four times a second (no redrawing thread), so the work it
watches does not slow down: bench/slashing_protection.py --import-only times the import
with and without it.
"""

from __future__ import annotations

import contextlib
import sys
import time
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
#: At most this many updates reach the bar over the whole work (plus the last one).
UPDATES = 1000
#: The bar is redrawn at most this often.
REDRAW_SECONDS = 0.25


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
    transient: bool = True,
) -> Iterator[Callable[[int], None] | None]:
    """A progress bar with the count done and the rate; yields ``update(done)``, or None
    when nothing is shown (``show=None``: only when stderr is a terminal). ``transient``
    erases it at the end; otherwise its last state stays."""
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
        transient=transient,
        # Drawn from ``update`` itself, a few times a second: no redrawing thread takes
        # the interpreter from the work while it runs.
        auto_refresh=False,
    ) as bar:
        task = bar.add_task(description, total=total)
        step = max(1, total // UPDATES)
        next_at = 0
        drawn_at = 0.0

        def update(done: int) -> None:
            nonlocal next_at, drawn_at
            if done < next_at and done < total:
                return
            next_at = done + step
            bar.update(task, completed=done)
            now = time.monotonic()
            if now - drawn_at >= REDRAW_SECONDS or done >= total:
                drawn_at = now
                bar.refresh()

        yield update
