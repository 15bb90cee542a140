"""fio's libaio engine needs io_setup(2), which qemu-user lacks: on such a target the fio workload
says so in one line before it makes anything, instead of failing at its first trial.

The target here is this machine with a `fio` first on its PATH that runs the real fio with
io_setup answering ENOSYS (a seccomp filter: tests/fixtures/native/no_io_setup.c), as the
emulated arm64 machine's fio does."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from shootout.base.errors import WorkloadError
from shootout.base.model import Config
from shootout.places.host import HostTarget
from shootout.workloads.contract import Context
from shootout.workloads.fio import Fio, check_engine

FIXTURE = Path(__file__).parent.parent / "fixtures" / "native" / "no_io_setup.c"


def _target(path: str) -> HostTarget:
    return HostTarget(Config(name="host", env=(("PATH", path),)))


def test_fio_without_io_setup_is_one_line_before_anything_is_made(tmp_path: Path) -> None:
    wrapper = tmp_path / "no-io-setup"
    subprocess.run(["cc", "-O", "-o", str(wrapper), str(FIXTURE)], check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fio").write_text(f'#!/bin/sh\nexec {wrapper} /usr/bin/fio "$@"\n')
    (bin_dir / "fio").chmod(0o755)
    target = _target(f"{bin_dir}:/usr/sbin:/usr/bin:/sbin:/bin")
    try:
        w = Fio()
        ctx = Context(target, "fio", {**w.default_params(target.probe()), **Fio.quick})
        with pytest.raises(WorkloadError) as caught:
            w.prepare(ctx)
        text = caught.value.message
        assert "\n" not in str(caught.value)
        assert text.startswith("fio: its libaio engine cannot start in host: ") and "io_queue_init" in text, text
        assert "qemu-user" in caught.value.hint
        assert not (Path(ctx.workdir()) / "jobs.fio").exists()  # refused before its job file and scratch
    finally:
        target.close()


def test_the_real_fio_passes_the_engine_check() -> None:
    target = _target("/usr/sbin:/usr/bin:/sbin:/bin")
    try:
        check_engine(target)
    finally:
        target.close()
