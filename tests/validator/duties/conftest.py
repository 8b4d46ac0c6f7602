"""The duty loop's doubles and runners (strict duty node on loopback, a real service)."""

from tests.client.conftest import beacon_spec, duty_node, run_service, validators_dir

__all__ = ["beacon_spec", "duty_node", "run_service", "validators_dir"]
