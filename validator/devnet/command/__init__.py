"""``validator devnet``: the client run against the simulated chain, and its interop keystores.

The one part of the simulated chain's package that imports the client: it runs it.
"""
