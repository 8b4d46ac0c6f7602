"""Strict mode: HTTP traffic held to the official OpenAPI documents as it happens.

:mod:`~validator.devnet.strict_mode.openapi_spec` loads a spec and judges one
exchange; :mod:`~validator.devnet.strict_mode.checkers` are the aiohttp client
and server middlewares that judge live traffic; and
:mod:`~validator.devnet.strict_mode.chain_api` turns them on for the simulated
chain's own server. openapi-core is needed only here, and only once a spec is
loaded (the ``strict`` extra).
"""
