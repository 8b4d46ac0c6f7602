"""The simulated external builder and its relay (``--builder``): registrations, bids, blinding.

What a beacon node with MEV-boost does, reduced to what a validator client can see:

- ``POST /eth/v1/validator/register_validator`` reaches the relay: each
  registration whose signature verifies (the judge checks it, independently of
  the client) is kept, unless its timestamp is older than the last one kept for
  that key (builder-specs: a registration never goes back in time) or more than
  ``FUTURE_TIMESTAMP_SECONDS`` ahead of the clock;
- ``produceBlockV3`` asks the relay for a bid when the proposer is registered;
  the builder's payload is worth ``BUILDER_BID_WEI``, the local one
  ``LOCAL_PAYLOAD_WEI``, and the builder wins when its value times the client's
  ``builder_boost_factor`` / 100 exceeds the local value: with these values a
  factor above 50 (the default 100 among them) takes the builder's block, 50 or
  less (0: local blocks only) the local one, so tests choose either outcome;
- the winning builder block pays the fee recipient and has the gas limit of the
  proposer's registration, and is served blinded (its payload replaced by the
  payload's header, the same block root); when the signed blinded block comes
  back the chain imports the full block it kept (it "unblinds" it).

With ``--fault builder-offline`` the relay answers no bid at all and the chain
builds local blocks, as a beacon node does when its relay is down.
"""

from __future__ import annotations

from dataclasses import dataclass

#: What the builder's bid and the local payload are worth, in wei (see the module docstring).
BUILDER_BID_WEI = 2 * 10**16
LOCAL_PAYLOAD_WEI = 10**16
#: How far ahead of the chain's clock a registration's timestamp may be.
FUTURE_TIMESTAMP_SECONDS = 10
#: builder_boost_factor is a percentage.
BOOST_FACTOR_SCALE = 100


@dataclass(frozen=True)
class Registration:
    """One validator's registration as the relay keeps it."""

    fee_recipient: bytes
    gas_limit: int
    timestamp: int


class SimulatedRelay:
    """The builder's view of the validators: their registrations, and whether a bid wins."""

    def __init__(self) -> None:
        self.registrations: dict[int, Registration] = {}

    def refusal(self, validator_index: int, timestamp: int, now: float) -> str | None:
        """Why a validly signed registration is refused (None: it is kept)."""
        if timestamp > now + FUTURE_TIMESTAMP_SECONDS:
            return f"timestamp {timestamp} is more than {FUTURE_TIMESTAMP_SECONDS} s ahead"
        kept = self.registrations.get(validator_index)
        if kept is not None and timestamp < kept.timestamp:
            return (
                f"timestamp {timestamp} is older than validator {validator_index}'s last "
                f"registration ({kept.timestamp})"
            )
        return None

    def keep(self, validator_index: int, registration: Registration) -> None:
        self.registrations[validator_index] = registration

    def winning_bid(self, proposer_index: int, boost_factor: int | None) -> Registration | None:
        """The proposer's registration when the builder's bid beats the local payload."""
        registration = self.registrations.get(proposer_index)
        if registration is None:
            return None
        factor = BOOST_FACTOR_SCALE if boost_factor is None else boost_factor
        if BUILDER_BID_WEI * factor <= LOCAL_PAYLOAD_WEI * BOOST_FACTOR_SCALE:
            return None
        return registration
