"""Which backend serves the calls of this process.

The choice is ``crypto_backend.use(name)`` or, before any call to ``use``, the
environment variable ``VALIDATOR_BLS_BACKEND`` (default ``blst``). An unknown
name is an error, never a silent fallback. Each backend is created once per
process and shared by all threads; every public call reads the selection once
at its start, so a concurrent ``use`` never mixes two libraries in one call.
"""

from __future__ import annotations

import os
import threading
from importlib import metadata
from typing import Any, Final

from crypto_backend import simd
from crypto_backend.arkworks_backend import ArkworksBackend
from crypto_backend.backend import Backend
from crypto_backend.blst_backend import BlstBackend

BACKEND_ENV: Final = "VALIDATOR_BLS_BACKEND"
DEFAULT_BACKEND: Final = BlstBackend.name

_FACTORIES: Final[dict[str, type[Backend[Any, Any]]]] = {
    BlstBackend.name: BlstBackend,
    ArkworksBackend.name: ArkworksBackend,
}
BACKEND_NAMES: Final = tuple(_FACTORIES)

_lock = threading.Lock()
_instances: dict[str, Backend[Any, Any]] = {}
_selected: Backend[Any, Any] | None = None


def backend_named(name: str) -> Backend[Any, Any]:
    """The process-wide instance of the named backend."""
    instance = _instances.get(name)
    if instance is not None:
        return instance
    factory = _FACTORIES.get(name)
    if factory is None:
        raise ValueError(
            f"unknown BLS backend {name!r}; choose one of {', '.join(BACKEND_NAMES)}"
        )
    with _lock:
        instance = _instances.get(name)
        if instance is None:
            instance = factory()
            _instances[name] = instance
    return instance


def use(name: str) -> None:
    """Select the backend for every later call in this process."""
    global _selected
    _selected = backend_named(name)


def current() -> Backend[Any, Any]:
    selected = _selected
    if selected is not None:
        return selected
    return _select_from_environment()


def _select_from_environment() -> Backend[Any, Any]:
    global _selected
    name = os.environ.get(BACKEND_ENV, "").strip() or DEFAULT_BACKEND
    if name not in _FACTORIES:
        try:
            backend_named(name)
        except ValueError as error:
            raise ValueError(f"{BACKEND_ENV}: {error}") from None
    # A backend that cannot start (VALIDATOR_BLS_SIMD=require without IFMA) says why itself.
    instance = backend_named(name)
    with _lock:
        if _selected is None:
            _selected = instance
        return _selected


def backend_name() -> str:
    """Name of the backend that serves calls now (``"blst"`` or ``"arkworks"``)."""
    return current().name


def info() -> dict[str, Any]:
    """What serves the calls now: ``backend`` (name), ``versions`` (of the libraries
    behind it), ``lanes`` (threads a batch may use), ``simd`` (the SIMD path of the
    native core, ``"none"`` for arkworks). Raises ValueError when
    ``VALIDATOR_BLS_SIMD`` cannot be honoured (crypto_backend.simd)."""
    backend = current()
    if backend.name == BlstBackend.name:
        from crypto_backend import _native

        versions = {"crypto_backend_native": _native.VERSION, "blst": _native.BLST_VERSION}
        lanes = _native.lane_count()
        simd_path = simd.path()
    else:
        versions = {"py-arkworks-bls12381": metadata.version("py-arkworks-bls12381")}
        # arkworks holds the GIL and runs every call on the calling thread.
        lanes = 1
        simd_path = "none"
    return {"backend": backend.name, "versions": versions, "lanes": lanes, "simd": simd_path}
