"""The status page (``validator run --status-page``): one HTML page at ``/`` of the metrics
server, rendered from a ``StatusSnapshot``.

Self-contained (inline style, an inline SVG chart, no script, no external asset: it works
offline and under the metrics server's Content-Security-Policy, which allows nothing
else), every value
escaped, and refreshed by the browser itself every few seconds.
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterable

from validator.status_view import EpochDuties, KeyRow, NodeRow, StatusSnapshot

REFRESH_SECONDS = 6

_STATE_TEXT = {
    "signing": "active",
    "waiting": "waiting for doppelganger protection",
    "halted": "halted",
    "live_elsewhere": "halted: a doppelganger was found",
}

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d1d1f;background:#fafafa}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.4em 0 .4em}
table{border-collapse:collapse;background:#fff}
th,td{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}
code{font:11px ui-monospace,monospace;word-break:break-all}
td.state{max-width:44em}td.key{white-space:nowrap}
.state-signing{color:#106b21}.state-waiting{color:#8a5a00}
.state-halted,.state-live_elsewhere{color:#b00020;font-weight:600}
.health-synced{color:#106b21}.health-offline,.health-unknown{color:#b00020}
.meta{color:#555}.problem{color:#b00020}
"""


def _text(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _number(value: int | None) -> str:
    return "&ndash;" if value is None else _text(value)


def _short(pubkey: str) -> str:
    """0x and the first and last 10 hex digits (the full key is the cell's title)."""
    return pubkey if len(pubkey) <= 24 else f"{pubkey[:12]}\u2026{pubkey[-10:]}"


def _key_row(row: KeyRow) -> str:
    state = _STATE_TEXT.get(row.state, row.state)
    cell = f'<span class="state-{_text(row.state)}">{_text(state)}</span>'
    if row.halt:
        cell += f"<br>{_text(row.halt)}"
    if row.resume:
        cell += (
            "<br>to resume, once no other client signs with it: "
            f"<code>{_text(row.resume)}</code>"
        )
    return (
        f'<tr data-pubkey="{_text(row.pubkey)}">'
        f'<td class="key"><code title="{_text(row.pubkey)}">{_text(_short(row.pubkey))}</code></td>'
        f'<td class="num">{_number(row.index)}</td>'
        f'<td class="state">{cell}</td><td>{"remote" if row.remote else "local"}</td>'
        f'<td class="num">{_number(row.last_attested_epoch)}</td>'
        f'<td class="num">{_number(row.last_proposal_slot)}</td>'
        f'<td class="num">{_number(row.watermark_block_slot)}</td>'
        f'<td class="num">{_number(row.watermark_source)}</td>'
        f'<td class="num">{_number(row.watermark_target)}</td></tr>'
    )


def _node_row(row: NodeRow) -> str:
    return (
        f"<tr><td><code>{_text(row.name)}</code></td>"
        f'<td class="health-{_text(row.health)}">{_text(row.health)}</td>'
        f"<td>{_text(row.last_error)}</td></tr>"
    )


def duties_chart(epochs: list[EpochDuties]) -> str:
    """Bars of duties per epoch: published in green, missed, failed or refused in red."""
    if not epochs:
        return '<p class="meta">No duties yet.</p>'
    width, height, gap = 24, 100, 4
    tallest = max(1, *(entry.published + entry.undone for entry in epochs))
    bars = []
    for position, entry in enumerate(epochs):
        x = position * (width + gap)
        done_h = entry.published * height / tallest
        undone_h = entry.undone * height / tallest
        title = f"epoch {entry.epoch}: {entry.published} published, {entry.undone} not done"
        bars.append(
            f'<g><title>{_text(title)}</title>'
            f'<rect x="{x}" y="{height - done_h:.1f}" width="{width}" height="{done_h:.1f}" '
            f'fill="#2e8540"/>'
            f'<rect x="{x}" y="{height - done_h - undone_h:.1f}" width="{width}" '
            f'height="{undone_h:.1f}" fill="#b00020"/>'
            f'<text x="{x + width / 2}" y="{height + 14}" font-size="10" '
            f'text-anchor="middle">{_text(entry.epoch)}</text></g>'
        )
    total_width = len(epochs) * (width + gap)
    return (
        f'<svg role="img" aria-label="duties per epoch" width="{total_width}" '
        f'height="{height + 20}" viewBox="0 0 {total_width} {height + 20}">{"".join(bars)}</svg>'
        '<p class="meta">Duties per epoch (attestations, blocks, aggregates, sync committee '
        "messages and contributions): green published, red missed, failed or refused.</p>"
    )


def _table(headers: Iterable[str], rows: Iterable[str], empty: str) -> str:
    body = "".join(rows)
    if not body:
        return f'<p class="meta">{_text(empty)}</p>'
    head = "".join(f"<th>{_text(header)}</th>" for header in headers)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render(snapshot: StatusSnapshot) -> str:
    taken = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(snapshot.taken_at))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="refresh" content="{REFRESH_SECONDS}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',
        "<title>validator status</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>validator status</h1>",
        f'<p class="meta">{_text(snapshot.phase)} &middot; as of {_text(taken)} &middot; '
        f"refreshes every {REFRESH_SECONDS} s</p>",
    ]
    if snapshot.phase == "starting":
        parts.append(
            "<p>Starting: waiting for a synced beacon node, the chain's configuration, the "
            "slashing-protection record and the keys.</p>"
        )
    else:
        finality = (
            f"finalized epoch {_number(snapshot.finalized_epoch)}, justified epoch "
            f"{_number(snapshot.justified_epoch)}"
            if snapshot.finality_problem is None
            else f'<span class="problem">finality unknown: {_text(snapshot.finality_problem)}'
            "</span>"
        )
        parts += [
            "<h2>Chain</h2>",
            f"<p>fork <b>{_text(snapshot.fork)}</b> &middot; epoch "
            f"{_number(snapshot.current_epoch)} &middot; head slot {_number(snapshot.head_slot)}"
            f" &middot; {finality}<br>genesis validators root "
            f"<code>{_text(snapshot.genesis_validators_root)}</code></p>",
        ]
    parts += [f'<p class="problem">{_text(problem)}</p>' for problem in snapshot.problems]
    parts += [
        "<h2>Keys</h2>",
        _table(
            [
                "public key", "index", "state", "signs", "last attested epoch",
                "last proposal (slot)", "record: block slot", "record: source",
                "record: target",
            ],  # fmt: skip
            (_key_row(row) for row in snapshot.keys),
            "No keys loaded (yet).",
        ),
        "<h2>Beacon nodes</h2>",
        _table(
            ["node", "health", "last error"],
            (_node_row(row) for row in snapshot.nodes),
            "No beacon node configured.",
        ),
    ]
    if snapshot.phase != "starting":
        parts += ["<h2>Duties</h2>", duties_chart(snapshot.epochs)]
    parts.append("</body></html>")
    return "\n".join(parts)
