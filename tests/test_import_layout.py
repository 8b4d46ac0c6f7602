"""The import graph of the product keeps its shape: arrows one way, no circles.

Every import statement of every module is read with ``ast`` -- at module level,
inside functions, under ``if TYPE_CHECKING:``, absolute and relative -- so a
type-only import counts as much as one that runs. ``from package import name``
is an edge to ``package.name`` when that is a module, else to ``package``.
Importing ``a.b.c`` is not counted as importing ``a`` and ``a.b``: a package's
``__init__`` re-exporting its children would otherwise make every child a
circle with it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("validator", "keymanager", "slashing_protection", "crypto_backend", "bench")

# Which top-level packages each package may import (besides itself).
ALLOWED: dict[str, frozenset[str]] = {
    "validator": frozenset({"keymanager", "slashing_protection", "crypto_backend"}),
    "keymanager": frozenset({"slashing_protection", "crypto_backend"}),
    "slashing_protection": frozenset(),
    "crypto_backend": frozenset(),
    "bench": frozenset({"validator", "keymanager", "slashing_protection", "crypto_backend"}),
}

KNOWN_AGAINST_DIRECTION: frozenset[tuple[str, str]] = frozenset()


def _modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the packages: dotted name -> (file, is a package __init__)."""
    found: dict[str, tuple[Path, bool]] = {}
    for package in PACKAGES:
        # A native extension has no .py: its .pyi stub names it (and its imports),
        # so `from crypto_backend import _native` is an edge to `_native`, not to
        # the package's __init__.
        sources = [*(REPO_ROOT / package).rglob("*.py"), *(REPO_ROOT / package).rglob("*.pyi")]
        for path in sorted(sources):
            parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            found[".".join(parts)] = (path, is_package)
    return found


MODULES = _modules()


def _imports_in(source: str, package: str) -> Iterator[str]:
    """The dotted names ``source`` imports; ``package`` anchors its relative imports."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                child = f"{module}.{alias.name}"
                yield child if child in MODULES else module


def _imported(name: str) -> Iterator[str]:
    path, is_package = MODULES[name]
    yield from _imports_in(path.read_text(), name if is_package else name.rpartition(".")[0])


def _graph() -> dict[str, set[str]]:
    """Module -> the modules of the packages it imports (outside imports dropped)."""
    graph: dict[str, set[str]] = {}
    for name in MODULES:
        graph[name] = {target for target in _imported(name) if target != name}
    return graph


GRAPH = _graph()


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = []
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        work.append((start, iter(sorted(graph[start] & graph.keys()))))
        while work:
            node, targets = work[-1]
            advanced = False
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target] & graph.keys()))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_the_reader_sees_every_kind_of_import() -> None:
    # Guards the reader itself: a type-only, a function-local and a relative import must
    # each show up, or the tests below would pass on a blind reader.
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from validator.beacon.errors import BeaconNodeError\n"
        "def later() -> None:\n    import validator.consensus.spec\n"
        "from .types import Genesis\n"
        "from . import nodes\n"
        "from ..consensus import ssz\n"
    )
    assert set(_imports_in(source, "validator.beacon")) == {
        "typing",
        "validator.beacon.errors",
        "validator.consensus.spec",
        "validator.beacon.types",
        "validator.beacon.nodes",
        "validator.consensus.ssz",
    }
    assert "validator.beacon.errors" in GRAPH["validator.beacon.nodes"]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_product_imports_no_test_tooling() -> None:
    leaks = {
        (name, imported)
        for name in MODULES
        for imported in _imported(name)
        if imported.split(".")[0] in ("tests", "conftest", "pytest")
    }
    assert leaks == set()


def test_imports_run_one_way_between_packages() -> None:
    against = set()
    for source, targets in GRAPH.items():
        source_package = source.split(".")[0]
        for target in targets:
            target_package = target.split(".")[0]
            if target_package not in ALLOWED:
                continue  # the standard library or a dependency
            if target_package != source_package and target_package not in ALLOWED[source_package]:
                against.add((source, target))
    assert against - KNOWN_AGAINST_DIRECTION == set()
    # A known violation that is gone must leave the list (and its shim must go).
    assert KNOWN_AGAINST_DIRECTION - against == set()


def test_no_circles_between_modules() -> None:
    assert _circles(GRAPH) == []


def test_the_simulated_chain_imports_only_the_wire_format_of_the_client() -> None:
    # The chain judges the client, so it must not share the client's code beyond the
    # wire format (validator.consensus); only its command, which runs the client, may.
    client_imports = set()
    for source, targets in GRAPH.items():
        if not source.startswith("validator.devnet") or source.startswith(
            "validator.devnet.command"
        ):
            continue
        for target in targets:
            if target == "validator" or target.startswith("validator."):
                if not target.startswith(("validator.consensus", "validator.devnet")):
                    client_imports.add((source, target))
    assert client_imports == set()
    assert "validator.devnet.chain.simulated_chain" in GRAPH


def test_the_shared_test_fixtures_import_no_bench_tooling() -> None:
    # bench/ measures the product and may change with it; what the fixtures share lives
    # in tests/support, so the suite does not hang on a benchmark's helpers.
    tests = REPO_ROOT / "tests"
    shared = [*tests.rglob("conftest.py"), *tests.glob("support/*.py")]
    assert len(shared) > 5
    from_bench = {
        (str(path.relative_to(REPO_ROOT)), imported)
        for path in shared
        for imported in _imports_in(path.read_text(), "tests.support")
        if imported.split(".")[0] == "bench"
    }
    assert from_bench == set()
