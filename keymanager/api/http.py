"""Request bodies in and JSON answers out, in the spec's shapes.

Every refusal of bad input raises `ApiError` (status 400 unless said), which
the server answers as the spec's `ErrorResponse` (`{"code", "message"}`).
Bodies are capped at `MAX_BODY_BYTES`.
"""

from __future__ import annotations

from typing import Any, NoReturn, TypeVar

import orjson
from aiohttp import web
from pydantic import BaseModel, ValidationError

from keymanager.api.limits import body_limit_problem
from keymanager.api.server_limits import read_body
from keymanager.pubkeys import parse_pubkey

# A request carries keystores (about 1 KiB each) and an EIP-3076 history
# (about 250 bytes per key in minimal form): 16 MiB is thousands of keys with
# room to spare, and bounds what one request can make the server hold.
MAX_BODY_BYTES = 16 * 1024 * 1024

JSON_CONTENT_TYPE = "application/json"

Model = TypeVar("Model", bound=BaseModel)


class ApiError(Exception):
    """An answer in the spec's error shape: `status` with `message`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def bad_request(message: str) -> NoReturn:
    raise ApiError(400, message)


def json_response(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type=JSON_CONTENT_TYPE)


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    return web.Response(
        body=orjson.dumps({"code": status, "message": message}),
        status=status,
        content_type=JSON_CONTENT_TYPE,
        headers=headers,
    )


def no_content(status: int) -> web.Response:
    """202 and 204 answers: no body."""
    return web.Response(status=status)


async def read_json(request: web.Request) -> Any:
    """The request body as JSON; 400 when it is missing, too large or not JSON."""
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        bad_request(_too_large(request.content_length))
    try:
        body = await read_body(request)  # server_limits.py: within the body timeout
    except web.HTTPRequestEntityTooLarge:
        bad_request(_too_large(None))
    except TimeoutError:
        bad_request("the request body did not arrive in time; the connection is closed")
    if not body.strip():
        bad_request("the request needs a JSON body")
    problem = body_limit_problem(body)
    if problem is not None:
        bad_request(problem)
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as error:
        bad_request(f"the request body is not valid JSON: {error}")


def _too_large(size: int | None) -> str:
    given = f" ({size} bytes)" if size is not None else ""
    return f"the request body{given} is over the {MAX_BODY_BYTES // (1024 * 1024)} MiB limit"


async def read_model(request: web.Request, model: type[Model]) -> Model:
    """The JSON body checked against a strict pydantic model; 400 naming the field."""
    document = await read_json(request)
    if not isinstance(document, dict):
        bad_request(f"the request body must be a JSON object, got {_json_kind(document)}")
    try:
        return model.model_validate(document)
    except ValidationError as error:
        bad_request(describe_validation_error(error))


def describe_validation_error(error: ValidationError) -> str:
    problems = []
    for problem in error.errors(include_url=False)[:4]:
        where = ".".join(str(part) for part in problem["loc"])
        message = problem["msg"].removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    more = f" (and {error.error_count() - 4} more)" if error.error_count() > 4 else ""
    return "invalid request: " + "; ".join(problems) + more


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def pubkey_value(text: object, where: str = "pubkey") -> bytes:
    """A pubkey as the spec writes it: 0x and 96 hex digits, any case; 400 otherwise."""
    if not isinstance(text, str):
        bad_request(f"{where} must be a string")
    try:
        return parse_pubkey(text)
    except ValueError as error:
        bad_request(f"{where}: {error}")


def pubkey_parameter(request: web.Request) -> bytes:
    return pubkey_value(request.match_info["pubkey"], "the pubkey in the path")
