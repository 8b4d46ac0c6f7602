"""Hold HTTP traffic to the standard Beacon API (ethereum/beacon-APIs) in strict mode.

Test and strict-mode tooling: both our Beacon API client and our simulated beacon
node can be made to check every request and response against the official
OpenAPI document, so each side is held to the standard and not only to the other.
The same machinery holds a remote signer's traffic to the Web3Signer API, and
(in the tests) our Keymanager API server to ethereum/keymanager-APIs.

- :func:`load_beacon_api_spec` loads the spec (``beacon-node-oapi.yaml`` with its
  relative ``$ref`` files) through openapi-core, once per process and directory;
  :func:`load_web3signer_spec` does the same for ``web3signer.yaml`` and
  :func:`load_openapi_spec` for any other OpenAPI document.
- :meth:`BeaconApiSpec.check_request` / :meth:`BeaconApiSpec.check_response`
  return readable error lists (empty when the exchange conforms).
- the middlewares that apply it to live traffic are in
  :mod:`validator.devnet.strict_mode.checkers`.

openapi-core is imported lazily, so importing this module costs nothing until a spec
is loaded; it is the ``strict`` extra (the ``test`` extra includes it), and loading a
spec without it raises :class:`SpecLoadError` saying so.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from multidict import CIMultiDict, MultiDict

if TYPE_CHECKING:
    from jsonschema_path import SchemaPath
    from openapi_core import OpenAPI

SPEC_DIR_ENV = "VALIDATOR_BEACON_API_SPEC"
VECTORS_ENV = "VALIDATOR_VECTORS_DIR"
SPEC_FILE = "beacon-node-oapi.yaml"
WEB3SIGNER_SPEC_DIR_ENV = "VALIDATOR_WEB3SIGNER_API_SPEC"
WEB3SIGNER_SPEC_FILE = "web3signer.yaml"
BEACON_API = "Beacon API"
WEB3SIGNER_API = "Web3Signer API"
# Every request is matched against the spec's templated server "{server_url}"; the
# real host does not matter for conformance, so one fixed origin is used.
_SPEC_ORIGIN = "http://localhost"
EVENT_STREAM = "text/event-stream"
_MAX_VALUE_CHARS = 160

_REPO_ROOT = Path(__file__).resolve().parents[3]


class SpecLoadError(RuntimeError):
    """An OpenAPI spec directory is missing or cannot be loaded."""


class SpecViolation(AssertionError):
    """An HTTP exchange does not conform to the spec (strict mode)."""

    def __init__(self, where: str, errors: Sequence[str], api: str = BEACON_API) -> None:
        self.where = where
        self.errors = list(errors)
        listed = "\n  ".join(self.errors)
        super().__init__(f"{where} does not conform to the {api}:\n  {listed}")


def default_spec_dir() -> Path:
    """Where the Beacon API spec is read from.

    ``$VALIDATOR_BEACON_API_SPEC`` if set, else ``$VALIDATOR_VECTORS_DIR/beacon-api``,
    else ``../shared/vectors/beacon-api`` next to the repository (the same rule as
    ``tests/support/official_vectors.py``).
    """
    explicit = os.environ.get(SPEC_DIR_ENV)
    if explicit:
        return Path(explicit)
    vectors = os.environ.get(VECTORS_ENV)
    root = Path(vectors) if vectors else _REPO_ROOT.parent / "shared" / "vectors"
    return root / "beacon-api"


def default_web3signer_spec_dir() -> Path:
    """Where the Web3Signer eth2 API spec is read from (as :func:`default_spec_dir`):
    ``$VALIDATOR_WEB3SIGNER_API_SPEC``, else ``<vectors>/web3signer/eth2``."""
    explicit = os.environ.get(WEB3SIGNER_SPEC_DIR_ENV)
    if explicit:
        return Path(explicit)
    vectors = os.environ.get(VECTORS_ENV)
    root = Path(vectors) if vectors else _REPO_ROOT.parent / "shared" / "vectors"
    return root / "web3signer" / "eth2"


@dataclass(frozen=True)
class HttpRequestParts:
    """What the spec judges about a request. ``path`` excludes the query string."""

    method: str
    path: str
    query: Sequence[tuple[str, str]] = ()
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None

    def describe(self) -> str:
        return f"{self.method.upper()} {self.path}"


@dataclass(frozen=True)
class HttpResponseParts:
    """What the spec judges about a response. ``body`` None means not inspected."""

    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None


class OpenApiRequest:
    """openapi-core's request protocol over :class:`HttpRequestParts`.

    Public so that a baseline can hand the very same exchange to plain openapi-core
    (``OpenAPI.iter_request_errors``), as ``bench/beacon_api_spec.py`` does.
    """

    def __init__(self, parts: HttpRequestParts) -> None:
        from openapi_core.datatypes import RequestParameters

        headers = CIMultiDict(parts.headers)
        self.host_url = _SPEC_ORIGIN
        self.path = parts.path
        self.method = parts.method.lower()
        self.body = parts.body
        self.content_type = headers.get("Content-Type", "")
        self.parameters = RequestParameters(
            query=MultiDict(parts.query), header=headers, cookie=MultiDict()
        )


class OpenApiResponse:
    """openapi-core's response protocol over :class:`HttpResponseParts` (public, as above)."""

    def __init__(self, parts: HttpResponseParts) -> None:
        headers = CIMultiDict(parts.headers)
        self.status_code = parts.status
        self.headers = headers
        self.content_type = headers.get("Content-Type", "")
        self.data = parts.body if parts.body is not None else b""


GLOAS_ROUTE_PREFIXES = (
    "/eth/v1/validator/duties/ptc/",
    "/eth/v1/validator/payload_attestation_data",
    "/eth/v1/beacon/pool/payload_attestations",
    "/eth/v4/validator/blocks/",
    "/eth/v1/beacon/execution_payload_envelopes",
    "/eth/v1/validator/proposer_preferences",
)
"""The Gloas routes, which beacon-APIs v4.0.0 does not have."""


class BeaconApiSpec:
    """A loaded OpenAPI document (the Beacon API's, or the one ``api`` names);
    thread-safe to use from one event loop."""

    def __init__(
        self, spec_dir: Path, openapi: OpenAPI, load_seconds: float, api: str = BEACON_API
    ) -> None:
        self.spec_dir = spec_dir
        self.load_seconds = load_seconds
        self.api = api
        self._openapi = openapi
        # openapi-core resolves $refs lazily through shared caches; keep calls serial.
        self._lock = threading.Lock()
        self._stream_validator: Any = None
        #: Gloas requests and responses left unchecked (see ``_outside_the_spec``).
        self.unchecked_gloas_exchanges = 0

    def check_request(self, request: HttpRequestParts) -> list[str]:
        """Readable reasons why ``request`` does not conform; empty when it does."""
        gloas_topic = any(
            name == "topics" and "execution_payload_available" in str(value).split(",")
            for name, value in (request.query or [])
        )
        if gloas_topic or self._outside_the_spec(request.path, request.headers):
            return []
        with self._lock, _quiet_spec_warnings():
            errors = list(self._openapi.iter_request_errors(OpenApiRequest(request)))
        return [line for error in errors for line in _describe(error, "request", self.api)]

    def check_response(self, request: HttpRequestParts, response: HttpResponseParts) -> list[str]:
        """Readable reasons why ``response`` (to ``request``) does not conform."""
        if self._outside_the_spec(request.path, request.headers) or self._outside_the_spec(
            "", response.headers
        ):
            return []
        spec_request = OpenApiRequest(request)
        spec_response = OpenApiResponse(response)
        content_type = spec_response.content_type.split(";")[0].strip().lower()
        streaming = content_type == EVENT_STREAM and response.body is None
        if response.body is None and not streaming:
            raise ValueError("a response body is needed unless the response is an event stream")
        with self._lock, _quiet_spec_warnings():
            if streaming:
                # An event stream never ends: judge its status and headers only.
                errors = list(self._headers_validator().iter_errors(spec_request, spec_response))
            else:
                errors = list(self._openapi.iter_response_errors(spec_request, spec_response))
        return [line for error in errors for line in _describe(error, "response", self.api)]

    def _outside_the_spec(self, path: str, headers: Any) -> bool:
        """A Gloas exchange: beacon-APIs v4.0.0 predates the fork (its routes, and ``gloas``
        in Eth-Consensus-Version), so it has nothing to check it against; counted instead."""
        if self.api != BEACON_API:
            return False
        version = (headers.get("Eth-Consensus-Version") or "").lower() if headers else ""
        gloas = version == "gloas" or path.startswith(GLOAS_ROUTE_PREFIXES)
        if gloas:
            self.unchecked_gloas_exchanges += 1
        return gloas

    def _headers_validator(self) -> Any:
        if self._stream_validator is None:
            from openapi_core.validation.response.validators import V31ResponseHeadersValidator

            self._stream_validator = V31ResponseHeadersValidator(self._openapi.spec)
        return self._stream_validator

    def require_request(self, request: HttpRequestParts) -> None:
        """Raise :class:`SpecViolation` unless ``request`` conforms."""
        errors = self.check_request(request)
        if errors:
            raise SpecViolation(f"request {request.describe()}", errors, self.api)

    def require_response(self, request: HttpRequestParts, response: HttpResponseParts) -> None:
        """Raise :class:`SpecViolation` unless ``response`` conforms."""
        errors = self.check_response(request, response)
        if errors:
            raise SpecViolation(
                f"response {response.status} to {request.describe()}", errors, self.api
            )


@contextlib.contextmanager
def _quiet_spec_warnings() -> Iterator[None]:
    """The spec's own use of the deprecated ``allowEmptyValue`` (on
    ``skip_randao_verification``) is not the traffic's fault; keep it out of logs."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Use of allowEmptyValue", DeprecationWarning)
        yield


_load_lock = threading.Lock()


def load_beacon_api_spec(spec_dir: Path | str | None = None) -> BeaconApiSpec:
    """Load (once per process and directory) the Beacon API spec from ``spec_dir``.

    ``spec_dir`` defaults to :func:`default_spec_dir`. The returned object records
    how long the load took in ``load_seconds``.
    """
    directory = Path(spec_dir) if spec_dir is not None else default_spec_dir()
    return load_openapi_spec(
        directory,
        SPEC_FILE,
        BEACON_API,
        f"put ethereum/beacon-APIs v4.0.0 in ../shared/vectors/beacon-api or set {SPEC_DIR_ENV}",
    )


def load_web3signer_spec(spec_dir: Path | str | None = None) -> BeaconApiSpec:
    """Load (once per process and directory) the Web3Signer eth2 signing API spec
    (default :func:`default_web3signer_spec_dir`)."""
    directory = Path(spec_dir) if spec_dir is not None else default_web3signer_spec_dir()
    return load_openapi_spec(
        directory,
        WEB3SIGNER_SPEC_FILE,
        WEB3SIGNER_API,
        f"put Consensys/web3signer's openapi-specs in ../shared/vectors/web3signer or set "
        f"{WEB3SIGNER_SPEC_DIR_ENV}",
    )


def load_openapi_spec(
    directory: Path, spec_file: str, api: str, where_to_get: str
) -> BeaconApiSpec:
    """Load (once per process and directory) the OpenAPI document ``directory/spec_file``;
    ``api`` names it in violations, ``where_to_get`` ends the error when it is missing."""
    with _load_lock:
        return _load_cached(directory.resolve(), spec_file, api, where_to_get)


@functools.cache
def _load_cached(directory: Path, spec_file: str, api: str, where_to_get: str) -> BeaconApiSpec:
    entry = directory / spec_file
    if not entry.is_file():
        raise SpecLoadError(f"{api} spec not found at {entry}; {where_to_get}")
    started = time.perf_counter()
    try:
        from openapi_core import OpenAPI
    except ImportError as exc:  # pragma: no cover - depends on installed extras
        raise SpecLoadError(
            f"strict {api} checks need openapi-core, which is not installed: "
            "pip install 'unslashable-validator[strict]'"
        ) from exc
    try:
        openapi = OpenAPI(_schema_path(entry))
    except Exception as exc:
        raise SpecLoadError(f"cannot load the {api} spec at {entry}: {exc}") from exc
    return BeaconApiSpec(directory, openapi, time.perf_counter() - started, api)


def _schema_path(entry: Path) -> SchemaPath:
    """The spec as openapi-core's SchemaPath, each $ref'd file parsed only once.

    The spec's relative $refs (apis/**, types/**, params/**) resolve against the
    entry file's URI. Left to itself, jsonschema-path re-reads and re-parses a YAML
    file at every $ref it follows while validating (hundreds of parses for one
    list of duties: about a second per answer), so file retrieval goes through a
    per-process cache.
    """
    from jsonschema_path import SchemaPath
    from jsonschema_path.handlers.file import FileHandler
    from jsonschema_path.handlers.utils import uri_to_path

    parse_file = FileHandler()
    parsed: dict[str, Any] = {}

    def cached_file(uri: str) -> Any:
        if uri not in parsed:
            with open(uri_to_path(uri), encoding="utf-8") as stream:
                parsed[uri] = parse_file(stream)
        return parsed[uri]

    base_uri = entry.resolve().as_uri()
    return SchemaPath.from_dict(
        cached_file(base_uri), base_uri=base_uri, handlers={"file": cached_file}
    )


def _short(value: Any) -> str:
    text = repr(value)
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 3] + "..."
    return text


def _closest_alternative(context: list[Any]) -> list[Any]:
    """The errors of the anyOf/oneOf branch the value most likely meant.

    The branch whose errors reach deepest into the value matched the most
    structure before failing (a SingleAttestation with one bad root, rather than
    an Attestation missing its bits); among equals, the one with fewest errors.
    """
    branches: dict[Any, list[Any]] = {}
    for error in context:
        branch = error.schema_path[0] if error.schema_path else None
        branches.setdefault(branch, []).append(error)

    def relevance(errors: list[Any]) -> tuple[int, int]:
        return (max(len(error.absolute_path) for error in errors), -len(errors))

    best = max(branches.values(), key=relevance)
    return sorted(best, key=lambda error: -len(error.absolute_path))


def _schema_error_lines(where: str, schema_error: Any) -> list[str]:
    """One line per jsonschema error, naming the JSON path and the failed keyword."""
    path = getattr(schema_error, "json_path", "$")
    validator = getattr(schema_error, "validator", None)
    context = list(getattr(schema_error, "context", None) or ())
    if validator in ("anyOf", "oneOf") and context:
        closest = _closest_alternative(context)
        inner = [line for error in closest[:3] for line in _schema_error_lines(where, error)]
        return [f"{where} {path}: no {validator} alternative matches; closest: {inner[0]}"] + [
            f"  and {line}" for line in inner[1:]
        ]
    instance = getattr(schema_error, "instance", None)
    message = getattr(schema_error, "message", str(schema_error))
    if validator in ("pattern", "enum", "type", "format", "maxLength", "minLength"):
        message = f"{_short(instance)} fails {validator} {_short(schema_error.validator_value)}"
    elif len(message) > 2 * _MAX_VALUE_CHARS:
        message = message[: 2 * _MAX_VALUE_CHARS] + "..."
    return [f"{where} {path}: {message}"]


def _describe(error: BaseException, side: str, api: str = BEACON_API) -> list[str]:
    """Turn an openapi-core error (and its causes) into readable lines."""
    from openapi_core.templating.paths.exceptions import PathError
    from openapi_core.templating.responses.exceptions import ResponseNotFound
    from openapi_core.validation.request.exceptions import (
        ParameterValidationError,
        RequestBodyValidationError,
    )
    from openapi_core.validation.response.exceptions import (
        DataValidationError,
        HeaderValidationError,
    )

    if isinstance(error, ParameterValidationError):
        where = f"{error.location} parameter {error.name!r}"
    elif isinstance(error, RequestBodyValidationError):
        where = "request body"
    elif isinstance(error, HeaderValidationError):
        where = f"response header {error.name!r}"
    elif isinstance(error, DataValidationError):
        where = "response body"
    elif isinstance(error, PathError):
        return [f"{side}: {error} (not an operation of the {api})"]
    elif isinstance(error, ResponseNotFound):
        return [f"response status {error.http_status} is not documented for this operation"]
    else:
        where = side
    cause = error.__cause__
    schema_errors = list(getattr(cause, "schema_errors", None) or ())
    if schema_errors:
        return [line for se in schema_errors for line in _schema_error_lines(where, se)]
    detail = str(error)
    if cause is not None and str(cause) not in detail:
        detail = f"{detail}: {cause}"
    # openapi-core repeats what ``where`` already says; keep the substance.
    for redundant in (f"{type(error).__name__}: ", "Request body validation error: "):
        detail = detail.removeprefix(redundant)
    if len(detail) > 3 * _MAX_VALUE_CHARS:
        detail = detail[: 3 * _MAX_VALUE_CHARS] + "..."
    return [f"{where}: {detail}"]
