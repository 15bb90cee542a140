"""Parse, then prepare: building a request reads what the user typed and touches nothing on the
machine; building userspaces, compiling the ABI probe and probing what runs here are the
preparation step's (preparation.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from shootout.base.model import RunSettings
from shootout.configs import specs as configs_module
from shootout.configs import userspaces as userspace_configs
from shootout.request.preparation import prepare
from shootout.request.request import Wish, build_request


@pytest.fixture
def untouchable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """Every way of changing or probing the machine fails the test (and says which was called)."""
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path))
    called: list[str] = []

    def forbidden(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            called.append(name)
            raise AssertionError(f"{name} was called while parsing")
        return call

    for module, name in [(userspace_configs, "create_userspace"), (userspace_configs, "headline_configs"),
                         (userspace_configs, "made_on_first_use"), (userspace_configs, "_create_parallel"),
                         (userspace_configs, "private_mounts"), (configs_module, "compile_c"),
                         (configs_module, "HostTarget"), (subprocess, "Popen")]:
        monkeypatch.setattr(module, name, forbidden(f"{module.__name__}.{name}"))
    monkeypatch.setattr("shootout.vm.kvm.kvm_problem", forbidden("kvm_problem"))
    monkeypatch.setattr("shootout.system.emulator.here", forbidden("emulator.here"))
    return called


@pytest.mark.parametrize("wish", [
    Wish(configs=["host", "host+m32"], workloads=["intmix"]),  # the -m32 probe is compiled and run
    Wish(configs=["debian:bookworm:amd64", "debian:bookworm:i386"], workloads=["intmix"]),  # made on first use
    Wish(configs=["host", "vm:debian:bookworm:amd64:amd64"], workloads=["intmix"]),  # KVM probed
    Wish(workloads=["intmix"]),  # the default comparison: two userspaces made by debootstrap
    Wish(configs=["host", "host+m32"], workloads=["intmix"], settings=RunSettings(aa=True)),
], ids=["abi-probe", "userspaces", "vm", "default", "aa"])
def test_building_a_request_touches_nothing(untouchable: list[str], tmp_path: Path, wish: Wish) -> None:
    said: list[str] = []
    parsed = build_request(wish, said.append)
    assert untouchable == []
    # nothing made under SHOOTOUT_HOME either (the registry lists its userspaces/ directory: made empty)
    assert all(path.is_dir() and not any(path.iterdir()) for path in tmp_path.iterdir())
    assert [w.spec.name for w in parsed.workloads] == ["intmix"]
    if wish.configs:
        assert [c.name for c in parsed.configs or []] == wish.configs
    else:
        assert parsed.configs is None  # chosen while preparing
    with pytest.raises(AssertionError, match="was called"):  # preparing it does touch the machine
        prepare(parsed, said.append)
    assert untouchable


def test_an_abi_problem_comes_out_of_the_preparation_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same one-line refusal as before, from the preparation step instead of the parsing."""
    from shootout.base.errors import UsageError

    monkeypatch.setattr(configs_module, "abi_problem", lambda config: None)  # parsing does not probe
    parsed = build_request(Wish(configs=["host", "host+mx32"], workloads=["intmix"]), print)
    monkeypatch.undo()
    monkeypatch.setattr("shootout.request.preparation.abi_problem",
                        lambda config: "this kernel cannot run mx32 programs (exit 1)" if config.abi else None)
    with pytest.raises(UsageError) as refused:
        prepare(parsed, print)
    assert str(refused.value).startswith("nothing to compare: of the 2 configurations only host can run here; "
                                         "host+mx32 cannot: this kernel cannot run mx32 programs (exit 1)")
    assert refused.value.exit_code == 2 and "\n" not in str(refused.value)
