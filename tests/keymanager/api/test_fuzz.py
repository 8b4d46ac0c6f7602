"""Random requests to every operation: never a 5xx, always a conforming answer, and
nothing gets past a missing or wrong token."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.keymanager.api.support import TOKEN, Api, hex_pubkey, import_body, pubkey

OPERATIONS = [
    ("GET", "/eth/v1/keystores"),
    ("POST", "/eth/v1/keystores"),
    ("DELETE", "/eth/v1/keystores"),
    ("GET", "/eth/v1/remotekeys"),
    ("POST", "/eth/v1/remotekeys"),
    ("DELETE", "/eth/v1/remotekeys"),
    *[
        (method, f"/eth/v1/validator/{{pubkey}}/{setting}")
        for setting in ("feerecipient", "gas_limit", "graffiti")
        for method in ("GET", "POST", "DELETE")
    ],
    ("POST", "/eth/v1/validator/{pubkey}/voluntary_exit"),
]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)  # what JSON clients send
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)
field_names = st.sampled_from(
    [
        "keystores",
        "passwords",
        "slashing_protection",
        "pubkeys",
        "remote_keys",
        "pubkey",
        "url",
        "ethaddress",
        "gas_limit",
        "graffiti",
    ]
)
bodies = st.none() | json_values | st.dictionaries(field_names, json_values, max_size=4)
pubkey_texts = st.sampled_from([hex_pubkey(1), hex_pubkey(2)]) | st.text(
    alphabet="0123456789abcdefABCDEFx", max_size=100
).filter(bool)
tokens = st.sampled_from([TOKEN, None, "", TOKEN[:-1], TOKEN + "0", "Basic " + TOKEN])


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    operation=st.sampled_from(OPERATIONS),
    pubkey_text=pubkey_texts,
    body=bodies,
    token=tokens,
    epoch=st.none() | st.text(alphabet="0123456789-x", max_size=22),
)
async def test_random_requests(
    api: Api,
    operation: tuple[str, str],
    pubkey_text: str,
    body: Any,
    token: str | None,
    epoch: str | None,
) -> None:
    if not api.context.store.has_keystore(pubkey(1)):  # a random DELETE may have removed it
        await api.post("/eth/v1/keystores", import_body([1]))
    method, template = operation
    path = template.replace("{pubkey}", pubkey_text)
    if token is None:
        headers = {"Authorization": ""}
    elif token.startswith("Basic "):
        headers = {"Authorization": token}
    else:
        headers = {"Authorization": f"Bearer {token}"}
    params = {"epoch": epoch} if epoch is not None and "voluntary_exit" in path else None
    answer = await api.call(method, path, body, headers=headers, params=params)
    assert answer.status < 500, answer.body
    if token != TOKEN:
        assert answer.status in (401, 403)
