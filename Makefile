# Two entry points for a fresh clone: `make devnet` (the main job) and `make test`.
# Each creates .venv and installs the project into it the first time.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install devnet test test-native lint bench clean gloas-oracle

# The native core (Rust, the workspace of crypto_backend/native) is built by pip
# through maturin; a change to any of its crates rebuilds.
NATIVE_SOURCES := $(shell find crypto_backend/native -name '*.rs' -o -name Cargo.toml)
CT_CHECK := tests/ct_check/Cargo.toml

$(STAMP): pyproject.toml Cargo.toml Cargo.lock $(NATIVE_SOURCES)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,dev]'
	touch $(STAMP)

install: $(STAMP)

# The pinned Gloas pyspec, the oracle of tests/validator/consensus/test_gloas_pyspec.py and
# of the simulated chain's Gloas tests. It needs Python >= 3.12 and the project runs on
# 3.11, so it gets an environment of its own (tests/support/gloas_oracle.py).
ORACLE_PYTHON ?= python3.12
ORACLE_VENV := .venv-gloas-oracle
ORACLE_STAMP := $(ORACLE_VENV)/.installed

$(ORACLE_STAMP):
	$(ORACLE_PYTHON) -m venv $(ORACLE_VENV)
	$(ORACLE_VENV)/bin/pip install --quiet eth-consensus-specs==1.7.0b4 ckzg==2.1.8
	touch $(ORACLE_STAMP)

gloas-oracle: $(ORACLE_STAMP)

devnet: $(STAMP)
	$(BIN)/validator devnet $(ARGS)

# Two pytest workers (pytest-xdist): the suite is CPU-bound on its crypto kernels and
# wall-clock-bound on its simulated chains, and two workers halve it on a 2-core host.
# Work stealing, so that the minute-long kernel differentials do not end up queued
# behind one worker. `make test TEST_WORKERS=0` runs it in one process.
TEST_WORKERS ?= 2

test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal $(ARGS)

# The kernels crate's own unit and differential tests (blst as the oracle). Its
# examples (the bench binaries cost_report and lane_bench, run --release by bench/)
# are left out: built in the test profile they took ten minutes, and `make lint`'s
# clippy --all-targets already checks that they compile.
test-native:
	cargo test --quiet -p bls_lanes --lib --tests

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	cargo fmt --all --check
	cargo fmt --check --manifest-path $(CT_CHECK)
	cargo clippy --quiet --workspace --all-targets -- -D warnings
	cargo clippy --quiet --all-targets --manifest-path $(CT_CHECK) --target-dir target/ct_check -- -D warnings

bench: $(STAMP)
	for script in bench/*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) $(ORACLE_VENV) build *.egg-info target crypto_backend/_native*.so
