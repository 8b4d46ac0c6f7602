"""The dashboard's and the alert rules' PromQL expressions, and the metric names in them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson
import yaml

from tests.support.official_vectors import REPO_ROOT

MONITORING_DIR = REPO_ROOT / "docs" / "monitoring"
DASHBOARD = MONITORING_DIR / "dashboard.json"
ALERTS = MONITORING_DIR / "alerts.yml"
ALERT_TESTS = REPO_ROOT / "tests" / "monitoring" / "alerts_test.yml"

# PromQL words that look like metric names: functions, aggregations, keywords.
_PROMQL_WORDS = frozenset(
    {
        "abs", "and", "avg", "bool", "by", "count", "histogram_quantile", "ignoring", "increase",
        "irate", "max", "min", "offset", "on", "or", "rate", "sum", "unless", "vector",
        "without", "group_left", "group_right", "delta", "deriv", "topk", "bottomk",
    }
)  # fmt: skip
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
_LABEL_SETS = re.compile(r"\{[^}]*\}")
_RANGES = re.compile(r"\[[^\]]*\]")
_LABEL_LISTS = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_IDENTIFIERS = re.compile(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)")


def metric_names(expression: str) -> set[str]:
    """The metric names an expression selects (label matchers, strings and ranges removed)."""
    bare = _RANGES.sub("", _LABEL_SETS.sub("", _STRINGS.sub('""', expression)))
    bare = _LABEL_LISTS.sub(" ", bare)
    names = set()
    for match in _IDENTIFIERS.finditer(bare):
        word = match.group(1)
        following = bare[match.end() :].lstrip()
        if word in _PROMQL_WORDS or following.startswith("("):
            continue
        names.add(word)
    return names


@dataclass(frozen=True)
class Panel:
    title: str
    expressions: list[str]


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = orjson.loads(DASHBOARD.read_bytes())
    return loaded


def panels() -> list[Panel]:
    found = []
    for panel in dashboard()["panels"]:
        if panel["type"] == "row":
            continue
        found.append(Panel(panel["title"], [target["expr"] for target in panel["targets"]]))
    return found


def alert_rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"] if "alert" in rule]


def alert_tests() -> list[dict[str, Any]]:
    """Every ``alert_rule_test`` case of the promtool unit tests."""
    tests = yaml.safe_load(ALERT_TESTS.read_text())["tests"]
    return [case for test in tests for case in test.get("alert_rule_test", [])]
