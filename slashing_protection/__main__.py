"""`python -m slashing_protection` runs the `slashing-protection` command."""

from slashing_protection.cli import main

main()
