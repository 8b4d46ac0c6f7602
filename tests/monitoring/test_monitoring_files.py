"""The dashboard and the alert rules name only metrics the client exports, and the rules
pass promtool's check and its unit tests, which cover every alert both ways."""

from __future__ import annotations

import subprocess

from prometheus_client import REGISTRY

from tests.monitoring.expressions import (
    ALERT_TESTS,
    ALERTS,
    alert_rules,
    alert_tests,
    dashboard,
    metric_names,
    panels,
)
from tests.support.debian_tools import debian_tool
from tests.validator.test_metrics_doc import exposed_names

#: Series Prometheus makes itself for every scrape target.
PROMETHEUS_SERIES = frozenset({"up"})


def exported_series_names() -> set[str]:
    """Every series name the client's registry can expose, suffixes included."""
    exposed_names()  # imports every module, so every metric is registered
    names = set(PROMETHEUS_SERIES)
    for family in REGISTRY.collect():
        if family.type == "counter":
            names.add(family.name + "_total")
        elif family.type == "histogram":
            names.update(family.name + suffix for suffix in ("_bucket", "_sum", "_count"))
        else:
            names.add(family.name)
    return names


def test_metric_names_are_read_out_of_expressions() -> None:
    expression = (
        'histogram_quantile(0.99, sum by (le) (rate(validator_a_bucket{kind="x"}[5m]))) '
        '/ on() validator_b or on() vector(0) and up{job="v"} == 0'
    )
    assert metric_names(expression) == {"validator_a_bucket", "validator_b", "up"}


def test_every_metric_a_panel_or_rule_names_is_exported_by_the_client() -> None:
    exported = exported_series_names()
    expressions = [(f"panel {p.title!r}", e) for p in panels() for e in p.expressions]
    expressions += [(f"alert {rule['alert']}", rule["expr"]) for rule in alert_rules()]
    assert len(expressions) > 30
    unknown = []
    for where, expression in expressions:
        names = metric_names(expression)
        assert names, f"{where} names no metric: {expression}"
        unknown += [f"{where}: {name}" for name in sorted(names - exported)]
    assert unknown == []


def test_the_dashboard_is_an_importable_grafana_dashboard() -> None:
    board = dashboard()
    assert board["uid"] and board["title"] and isinstance(board["schemaVersion"], int)
    # Import asks for the Prometheus data source every panel and target names.
    assert [entry["name"] for entry in board["__inputs"]] == ["DS_PROMETHEUS"]
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids))
    for panel in board["panels"]:
        assert {"x", "y", "w", "h"} <= set(panel["gridPos"])
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == "${DS_PROMETHEUS}"
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == "${DS_PROMETHEUS}"
            assert target["refId"] and target["expr"]
    titles = " ".join(panel.title.lower() for panel in panels())
    for subject in ("duties", "refusals", "record write", "signing latency", "beacon node health",
                    "key states", "keys the signer holds"):  # fmt: skip
        assert subject in titles, subject


def test_the_rules_pass_promtool_check() -> None:
    promtool = debian_tool("promtool", "prometheus")
    checked = subprocess.run(
        [promtool, "check", "rules", str(ALERTS)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(alert_rules())} rules found" in checked.stdout


def test_the_unit_tests_cover_every_alert_firing_and_silent() -> None:
    cases = alert_tests()
    for rule in alert_rules():
        mine = [case for case in cases if case["alertname"] == rule["alert"]]
        assert any(case["exp_alerts"] for case in mine), f"{rule['alert']} never fires"
        assert any(not case["exp_alerts"] for case in mine), f"{rule['alert']} never silent"
    # promtool passes a case whose alert name no rule has: every name must be a rule's.
    assert {case["alertname"] for case in cases} == {rule["alert"] for rule in alert_rules()}


def test_the_promtool_unit_tests_pass() -> None:
    promtool = debian_tool("promtool", "prometheus")
    tested = subprocess.run(
        [promtool, "test", "rules", str(ALERT_TESTS)], capture_output=True, text=True, timeout=120
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout
