"""docs/metrics.md lists every validator_* metric the project registers."""

from __future__ import annotations

import importlib
import pkgutil

from prometheus_client import REGISTRY

from tests.support.official_vectors import REPO_ROOT

PACKAGES = ("crypto_backend", "slashing_protection", "keymanager", "validator")


def exposed_names() -> set[str]:
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        for module in pkgutil.walk_packages(package.__path__, package_name + "."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    names = set()
    for metric in REGISTRY.collect():
        if metric.name.startswith("validator_"):
            names.add(metric.name + "_total" if metric.type == "counter" else metric.name)
    return names


def test_every_metric_is_documented() -> None:
    names = exposed_names()
    # The families this page is about must all be there, whatever else is.
    assert {
        "validator_duties_total",
        "validator_signatures_total",
        "validator_slashing_protection_write_seconds",
        "validator_beacon_node_request_seconds",
    } <= names
    page = (REPO_ROOT / "docs" / "metrics.md").read_text()
    missing = sorted(name for name in names if f"`{name}`" not in page)
    assert missing == []
