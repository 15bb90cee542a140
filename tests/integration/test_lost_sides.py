"""A comparison of two configurations, one of which cannot run here for a reason only root
sees (root, CI): refused in one line naming it, before anything is changed, made or stored —
never measured alone and reported 'complete'."""

from __future__ import annotations

from pathlib import Path

import pytest

from shootout.store import Store

ZSWAP = Path("/sys/module/zswap/parameters")


def _zswap() -> dict[str, str]:
    return {p.name: p.read_text() for p in ZSWAP.iterdir()} if ZSWAP.exists() else {}


@pytest.mark.parametrize(("table", "message"), [
    ('swap = { kind = "disk", size = "64M", on = "/dev/shm" }\nmemory = "256M"', "tmpfs lives in memory"),
    ('swap = { kind = "zswap", size = "64M", compressor = "nosuch" }\nmemory = "256M"',
     "zswap: this kernel has no compressor 'nosuch'"),
    ('sysctl = { "vm.no_such_setting" = "1" }', "no sysctl vm.no_such_setting on this kernel"),
    ('sysctl = { "kernel.osrelease" = "1.0" }', "kernel.osrelease is read-only"),
    ('scratch = { fs = "ext4", size = "64T", in = "/var/tmp" }', "GiB free in /var/tmp"),
])
def test_a_comparison_left_with_one_side_is_refused_before_anything_changes(require_root, shootout, tmp_path,
                                                                           table, message):
    before = _zswap()
    toml = tmp_path / "two.toml"
    toml.write_text(f'[[config]]\nname = "plain"\nspec = "host"\n\n[[config]]\nname = "bad"\nspec = "host"\n{table}\n')
    done = shootout("run", "-f", str(toml), "-c", "plain", "-c", "bad", "-w", "intmix", "--db", shootout.db)
    assert done.returncode == 2, done.stdout + done.stderr
    line = " ".join(done.stderr.split())
    assert line.startswith("error: nothing to compare: of the 2 configurations only plain can run here; bad cannot: ")
    assert message in line and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert Store(shootout.db).list_runs() == []
    assert list((tmp_path / "journal").glob("*.jsonl")) == []
    assert _zswap() == before

