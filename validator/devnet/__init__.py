"""A simulated beacon chain that speaks the standard Beacon API, judges and slashes.

``validator devnet`` and the end-to-end tests run the validator client against
it. See docs/devnet.md for what it simulates, its endpoints, its state
directory, its fault modes and its summary.
"""

from validator.devnet.chain.faults import Fault
from validator.devnet.chain.state_directory import DevnetStateError, devnet_state_dir
from validator.devnet.child_process import DevnetProcess
from validator.devnet.node import SimulatedBeaconNode

FAULTS: tuple[str, ...] = tuple(fault.value for fault in Fault)

__all__ = [
    "FAULTS",
    "DevnetProcess",
    "DevnetStateError",
    "Fault",
    "SimulatedBeaconNode",
    "devnet_state_dir",
]
