"""A comparison that loses sides to configurations that cannot run here (a sysctl this kernel
lacks, here: found without root): refused when one side is left, unless one was asked for;
with two or more left, the run keeps what it lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from shootout.base.errors import UsageError
from shootout.request.preparation import prepare
from shootout.request.request import Wish, build_request


@pytest.fixture(autouse=True)
def not_under_qemu_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about lost sides: on a machine that itself runs under qemu-user (the
    emulated arm64 check) the refusal of the whole machine would come first."""
    monkeypatch.setattr("shootout.system.emulator.here", lambda: None)


def quiet(line: str) -> None:
    """Messages of a request nobody reads here."""


MISSING = 'sysctl = { "vm.no_such_setting" = "1" }'
WHY = "nosuch cannot: no sysctl vm.no_such_setting on this kernel"


def write(tmp_path: Path, *tables: tuple[str, str]) -> Path:
    path = tmp_path / "shootout.toml"
    path.write_text("".join(f'[[config]]\nname = "{name}"\nspec = "{spec}"\n{extra}\n\n' for name, spec, extra in
                            ((n, "host", e) for n, e in tables)))
    return path


def test_two_asked_one_lost_is_one_line_and_names_the_lost_one(tmp_path: Path) -> None:
    said: list[str] = []
    path = write(tmp_path, ("plain", ""), ("nosuch", MISSING))
    with pytest.raises(UsageError) as err:
        prepare(build_request(Wish(file=path, workloads=["intmix"]), said.append), said.append)
    assert str(err.value).startswith("nothing to compare: of the 2 configurations only plain can run here; " + WHY)
    assert "-c plain" in str(err.value) and "\n" not in str(err.value)
    assert not any("skipping" in line for line in said)  # the error says it, once


def test_three_asked_one_lost_runs_the_two_and_keeps_what_was_lost(tmp_path: Path) -> None:
    said: list[str] = []
    path = write(tmp_path, ("plain", ""), ("nosuch", MISSING), ("again", ""))
    request = prepare(build_request(Wish(file=path, workloads=["intmix"]), said.append), said.append)
    assert [c.name for c in request.configs] == ["plain", "again"]
    assert list(request.lost) == ["nosuch"] and "no sysctl vm.no_such_setting" in request.lost["nosuch"]
    assert any(line.startswith("skipping configuration nosuch: no sysctl") for line in said), said


def test_one_configuration_asked_for_runs_alone(tmp_path: Path) -> None:
    path = write(tmp_path, ("plain", ""), ("nosuch", MISSING))
    request = prepare(build_request(Wish(file=path, configs=["plain"], workloads=["intmix"]), quiet), quiet)
    assert [c.name for c in request.configs] == ["plain"] and request.lost == {}
    with pytest.raises(UsageError, match="^no configuration can run here: " + WHY):
        prepare(build_request(Wish(file=path, configs=["nosuch"], workloads=["intmix"]), quiet), quiet)


def test_aa_measures_the_first_and_refuses_when_it_is_lost(tmp_path: Path) -> None:
    from shootout.base.model import RunSettings

    path = write(tmp_path, ("plain", ""), ("nosuch", MISSING))
    aa = RunSettings(aa=True)
    request = prepare(build_request(Wish(file=path, workloads=["intmix"], settings=aa), quiet), quiet)
    assert [c.name for c in request.configs] == ["plain", "plain~again"] and request.lost == {}
    with pytest.raises(UsageError, match="^--aa measures nosuch, which cannot run here: no sysctl"):
        prepare(build_request(Wish(file=path, configs=["nosuch", "plain"], workloads=["intmix"], settings=aa), quiet), quiet)


def test_a_lost_side_is_found_before_any_userspace_is_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from shootout.configs import userspaces as configs

    made: list[str] = []
    monkeypatch.setattr(configs, "create_userspace", lambda name, *a, **kw: made.append(name))
    monkeypatch.setattr(configs, "_ready", lambda name: False)
    monkeypatch.setattr(configs, "preflight", lambda *args: None)
    monkeypatch.setattr(configs, "private_mounts", lambda: None)
    path = tmp_path / "shootout.toml"
    path.write_text(f'[[config]]\nname = "nosuch"\nspec = "debian:bookworm:i386"\n{MISSING}\n')
    with pytest.raises(UsageError, match="^nothing to compare: .*only debian:bookworm:amd64 can run here; " + WHY):
        prepare(build_request(Wish(file=path, configs=["debian:bookworm:amd64", "nosuch"], workloads=["intmix"]), quiet), quiet)
    assert made == []


def test_a_vm_without_emulate_where_kvm_is_not_hardware_backed_is_a_lost_side(monkeypatch: pytest.MonkeyPatch) -> None:
    from shootout.vm import kvm

    monkeypatch.setattr(kvm, "kvm_problem", lambda guest=None: "/dev/kvm is missing")
    vm = "vm:debian:bookworm:amd64:amd64"
    with pytest.raises(UsageError, match=f"^nothing to compare: .*only host can run here; {vm} cannot: no hardware KVM"):
        prepare(build_request(Wish(configs=["host", vm], workloads=["intmix"]), quiet), quiet)
    request = prepare(build_request(Wish(configs=["host", vm], workloads=["intmix"], emulate=True), quiet), quiet)
    assert [c.name for c in request.configs] == ["host", vm]
