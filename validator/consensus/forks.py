"""The consensus forks this client knows, in activation order."""

from __future__ import annotations

from enum import StrEnum

FAR_FUTURE_EPOCH = 2**64 - 1
"""The epoch the specs use for "not scheduled"."""


class ForkName(StrEnum):
    """Fork names as the Beacon API spells them (``Eth-Consensus-Version``, ``version``)."""

    PHASE0 = "phase0"
    ALTAIR = "altair"
    BELLATRIX = "bellatrix"
    CAPELLA = "capella"
    DENEB = "deneb"
    ELECTRA = "electra"
    FULU = "fulu"
    GLOAS = "gloas"

    @property
    def order(self) -> int:
        """Position in activation order; phase0 is 0."""
        return FORK_ORDER.index(self)

    def at_least(self, other: ForkName) -> bool:
        return self.order >= other.order

    @classmethod
    def parse(cls, name: str) -> ForkName:
        """The fork named exactly ``name`` (the API's lowercase), or ValueError naming the known.

        The Beacon API spells fork names in lowercase only; ``Electra`` is not a fork name
        but a malformed one, and accepting it would hide a broken node.
        """
        try:
            return cls(name)
        except ValueError:
            known = ", ".join(fork.value for fork in FORK_ORDER)
            raise ValueError(f"unknown fork {name!r}; this client knows {known}") from None


FORK_ORDER: tuple[ForkName, ...] = tuple(ForkName)
