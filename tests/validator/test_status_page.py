"""The status page's HTML: every value escaped, nothing loaded from elsewhere, the chart
drawn from the journal's counts."""

from __future__ import annotations

import re

from validator.duties.journal import DutyJournal
from validator.duties.metrics import DutyKind, DutyResult
from validator.status_page import render
from validator.status_view import EpochDuties, KeyRow, NodeRow, StatusSnapshot

HOSTILE = '<script>alert("x")</script>&"\''


def snapshot(**changes: object) -> StatusSnapshot:
    values: dict[str, object] = {
        "phase": "running",
        "taken_at": 1_700_000_000.0,
        "genesis_validators_root": "0x" + "ab" * 32,
        "fork": "electra",
        "current_epoch": 7,
        "head_slot": 57,
        "finalized_epoch": 5,
        "justified_epoch": 6,
        "keys": [
            KeyRow(
                pubkey="0x" + "aa" * 48,
                index=3,
                state="halted",
                remote=False,
                halt=f"the chain reports it slashed ({HOSTILE})",
                resume="validator resume --validators-dir /v --pubkey 0x" + "aa" * 48,
                last_attested_epoch=6,
                last_proposal_slot=50,
                watermark_block_slot=50,
                watermark_source=5,
                watermark_target=6,
            ),
            KeyRow(pubkey="0x" + "bb" * 48, index=4, state="waiting", remote=True),
        ],
        "nodes": [NodeRow(f"http://node:5052/{HOSTILE}", "offline", HOSTILE)],
        "epochs": [EpochDuties(6, 10, 0), EpochDuties(7, 4, 2)],
    }
    values.update(changes)
    return StatusSnapshot(**values)  # type: ignore[arg-type]


def test_every_value_is_escaped_and_nothing_comes_from_elsewhere() -> None:
    page = render(snapshot(fork=HOSTILE, finality_problem=None, problems=[HOSTILE]))
    assert "<script" not in page
    assert page.count("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&quot;&#x27;") == 5
    # No script, and the only URL-valued attribute is the empty inline icon.
    assert re.findall(r'(?:src|href)="([^"]*)"', page) == ["data:,"]
    assert '<meta http-equiv="refresh"' in page


def test_keys_show_their_state_the_resume_command_and_watermarks() -> None:
    page = render(snapshot())
    halted = page.split('data-pubkey="0x' + "aa" * 48 + '"')[1].split("</tr>")[0]
    assert "halted" in halted and "validator resume --validators-dir /v --pubkey 0x" in halted
    assert [cell for cell in re.findall(r'<td class="num">([^<]*)</td>', halted)] == [
        "3", "6", "50", "50", "5", "6",
    ]  # fmt: skip
    waiting = page.split('data-pubkey="0x' + "bb" * 48 + '"')[1].split("</tr>")[0]
    assert "waiting for doppelganger protection" in waiting and "remote" in waiting
    assert "finalized epoch 5, justified epoch 6" in page


def test_a_starting_client_says_so_without_a_chart() -> None:
    page = render(StatusSnapshot(phase="starting", taken_at=0.0))
    assert "Starting: waiting for a synced beacon node" in page
    assert "<svg" not in page


def test_the_journal_counts_outcomes_per_slot_and_the_last_published_slot() -> None:
    journal = DutyJournal(kept_slots=2)
    journal.note(8, DutyKind.ATTESTATION, [(1, DutyResult.PUBLISHED), (2, DutyResult.MISSED)])
    journal.note(9, DutyKind.BLOCK, [(1, DutyResult.PUBLISHED)])
    journal.note(10, DutyKind.ATTESTATION, [(2, DutyResult.PUBLISHED)])
    assert journal.last_published(1, DutyKind.ATTESTATION) == 8
    assert journal.last_published(1, DutyKind.BLOCK) == 9
    assert journal.last_published(2, DutyKind.ATTESTATION) == 10
    assert journal.last_published(3, DutyKind.ATTESTATION) is None
    # Only the last two slots are kept.
    assert sorted(journal.outcomes_by_slot()) == [9, 10]
