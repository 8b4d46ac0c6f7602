"""The simulated chain: time, blocks, duties, finality, validators, pools, counters, fault modes.

:class:`~validator.devnet.chain.simulated_chain.DevnetChain` owns the
components; what it builds for the client (blocks, aggregates, contributions)
is :mod:`validator.devnet.chain.production`'s, and its state directory is
:mod:`validator.devnet.chain.state_directory`'s. Like the rest of the chain it
imports, of the client, only ``validator.consensus`` (the shared wire format).
"""
