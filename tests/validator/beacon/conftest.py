"""The beacon-node doubles' fixtures (fake nodes on loopback, strict clients) for these tests."""

from tests.beacon.conftest import fake_node, make_client, spec, unused_url

__all__ = ["fake_node", "make_client", "spec", "unused_url"]
