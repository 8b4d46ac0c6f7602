"""`slashing-protection import|export --network NAME` refuses a file or record of another
chain in one line, changing nothing; the right chain passes."""

from __future__ import annotations

from pathlib import Path

from slashing_protection import RECORD_FILE, SlashingProtection
from slashing_protection.networks import GENESIS_VALIDATORS_ROOTS
from tests.slashing_protection.test_cli import assert_one_line_error, run
from tests.support.records import entry, interchange, pubkey

SEPOLIA = GENESIS_VALIDATORS_ROOTS["sepolia"]
MAINNET = GENESIS_VALIDATORS_ROOTS["mainnet"]


def test_import_and_export_check_the_network(tmp_path: Path) -> None:
    history = tmp_path / "sepolia.json"
    history.write_bytes(interchange([entry(pubkey(1), slots=(7,))], root=SEPOLIA))
    validators = tmp_path / "validators"

    refused = run("import", history, "--validators-dir", validators, "--network", "mainnet")
    assert_one_line_error(refused, "--network mainnet: ")
    assert f"is of sepolia (genesis_validators_root 0x{SEPOLIA.hex()}), not mainnet" in (
        refused.stderr
    )
    assert not validators.exists()  # nothing created

    imported = run("import", history, "--validators-dir", validators, "--network", "sepolia")
    assert imported.returncode == 0, imported.stderr
    with SlashingProtection.open(validators, SEPOLIA) as record:
        assert record.watermark(pubkey(1)) is not None

    # Into a Sepolia record, a mainnet file is refused by --network before the record is.
    other = tmp_path / "mainnet.json"
    other.write_bytes(interchange([entry(pubkey(2), slots=(3,))], root=MAINNET))
    before = (validators / RECORD_FILE).read_bytes()
    refused = run("import", other, "--validators-dir", validators, "--network", "sepolia")
    assert_one_line_error(refused, "is of mainnet")
    assert (validators / RECORD_FILE).read_bytes() == before

    refused = run("export", tmp_path / "out.json", "--validators-dir", validators,
                  "--network", "hoodi")  # fmt: skip
    assert_one_line_error(refused, "the record")
    assert not (tmp_path / "out.json").exists()
    exported = run("export", tmp_path / "out.json", "--validators-dir", validators,
                   "--network", "sepolia")  # fmt: skip
    assert exported.returncode == 0, exported.stderr

    unknown = run("import", history, "--validators-dir", validators, "--network", "goerli")
    assert_one_line_error(unknown, "built in are mainnet, sepolia, hoodi")
