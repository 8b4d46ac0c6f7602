"""The one path to a signature.

The signer (slashing-protection check, durable record, then signature), the
keys it holds, the guards it applies, its request/result types and the helper
that runs blocking work without losing it to cancellation.
"""
