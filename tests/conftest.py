"""Fixtures shared by unit and end-to-end tests."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

# A PostgreSQL role that may create databases (.ci/postgres makes one and prints its URL).
PG_ENV = "SHOOTOUT_TEST_PG_URL"

FakeBoot = Callable[..., Path]


@pytest.fixture(scope="session", autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A data directory of the test session's own where a test sets none, so that no test
    reads or leaves anything in the user's (~/.local/share/shootout: results, journals)."""
    if os.environ.get("SHOOTOUT_HOME"):
        yield
        return
    mp = pytest.MonkeyPatch()
    mp.setenv("SHOOTOUT_HOME", str(tmp_path_factory.mktemp("shootout-home")))
    yield
    mp.undo()


@pytest.fixture
def fake_boot(tmp_path: Path) -> FakeBoot:
    """A fake root as one boot shows it (boot id, release, uname -m, command line, config.txt)."""

    def make(boot_id: str, release: str, machine: str = "x86_64", config_txt: str | None = None) -> Path:
        root = tmp_path / "boots" / boot_id
        files = {"proc/sys/kernel/random/boot_id": boot_id, "proc/sys/kernel/osrelease": release,
                 "proc/sys/kernel/arch": machine, "proc/cmdline": f"BOOT_IMAGE=/vmlinuz-{release} root=/dev/sda1 ro quiet"}
        if config_txt is not None:
            files["boot/firmware/config.txt"] = config_txt
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text + "\n")
        return root

    return make


@pytest.fixture
def pg_server() -> str:
    """The server the PostgreSQL tests use: without one they skip, but fail in CI (CI is set)."""
    url = os.environ.get(PG_ENV)
    if not url:
        why = f"no PostgreSQL server for the tests: set {PG_ENV} (.ci/postgres starts one and prints it)"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    return url


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A new, empty PostgreSQL database of this test's own; dropped afterwards."""
    name = f"shootout_test_{secrets.token_hex(6)}"
    admin = create_engine(pg_server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield make_url(pg_server).set(database=name).render_as_string(hide_password=False)
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()
