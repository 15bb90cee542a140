"""What `shootout run --file` runs when the file defines workloads (docs/configurations.md's own example)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shootout.request.preparation import prepare
from shootout.request.request import Wish, build_request
from shootout.workloads.debpackages import workload_packages


def quiet(line: str) -> None:
    """Messages of a request nobody reads here."""


CONFIGURATIONS = Path(__file__).resolve().parents[2] / "docs" / "configurations.md"


def example_toml(tmp_path: Path) -> Path:
    """The shootout.toml example of docs/configurations.md, verbatim."""
    match = re.search(r"```toml\n(.*?)```", CONFIGURATIONS.read_text(), re.S)
    assert match, "docs/configurations.md lost its shootout.toml example"
    path = tmp_path / "shootout.toml"
    path.write_text(match.group(1))
    return path


def test_a_file_that_defines_workloads_and_selects_none_runs_them(tmp_path: Path) -> None:
    said: list[str] = []
    request = build_request(Wish(file=example_toml(tmp_path)), said.append)
    # Its own workload, and the built-in one it gives parameters to (the example's [params.intmix]).
    assert [w.spec.name for w in request.workloads] == ["mytool", "intmix"]
    assert request.params["intmix"]["iterations"] == 2000000
    assert [c.name for c in request.configs] == ["plain", "lto"]
    assert any("mytool" in line and "none was selected" in line for line in said), said


@pytest.mark.parametrize("wish, expected", [
    ({"suite": "cpu"}, None),  # an explicit suite: the suite only
    ({"workloads": ["ptrtree"]}, ["ptrtree"]),
    ({"workloads": ["mytool", "ptrtree"]}, ["mytool", "ptrtree"]),
])
def test_an_explicit_choice_wins_over_the_file(tmp_path: Path, wish: dict, expected: list[str] | None) -> None:
    said: list[str] = []
    request = build_request(Wish(file=example_toml(tmp_path), **wish), said.append)
    names = [w.spec.name for w in request.workloads]
    if expected is None:
        assert "mytool" not in names and names
    else:
        assert names == expected
    assert not any("none was selected" in line for line in said)
    if "intmix" not in names:  # the file's parameters for a workload not chosen: said, not applied
        assert "intmix" not in request.params
        assert any("[params.intmix]" in line and "not used" in line for line in said), said


def test_workloads_listed_in_the_run_table_are_used(tmp_path: Path) -> None:
    path = example_toml(tmp_path)
    path.write_text(path.read_text().replace('[run]\n', '[run]\nworkloads = ["intmix"]\n'))
    request = build_request(Wish(file=path), lambda line: None)
    assert [w.spec.name for w in request.workloads] == ["intmix"]


def test_a_file_with_parameters_only_runs_the_workloads_it_gives_them_to(tmp_path: Path) -> None:
    path = tmp_path / "shootout.toml"
    path.write_text("[params.intmix]\niterations = 12345\n")
    said: list[str] = []
    request = build_request(Wish(configs=["host"], file=path), said.append)
    assert [w.spec.name for w in request.workloads] == ["intmix"]
    assert request.params["intmix"]["iterations"] == 12345
    assert any("intmix" in line and "none was selected" in line for line in said), said


def test_a_file_that_defines_configurations_and_selects_none_compares_them(tmp_path: Path) -> None:
    path = tmp_path / "two.toml"
    path.write_text('[[config]]\nname = "one"\nspec = "host"\n\n[[config]]\nname = "two"\nspec = "host"\n'
                    'env = { X = "1" }\n\n[run]\nworkloads = ["intmix"]\n')
    said: list[str] = []
    request = build_request(Wish(file=path), said.append)
    assert [c.name for c in request.configs] == ["one", "two"]  # not the default userspaces
    assert any("one, two" in line and "none was selected" in line for line in said), said
    request = build_request(Wish(file=path, configs=["two", "one"]), said.append)
    assert [c.name for c in request.configs] == ["two", "one"]


def _created_with(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...] | None]:
    """The packages every userspace the request would create is asked for."""
    from shootout.base.model import Config
    from shootout.configs import userspaces as configs

    asked: list[tuple[str, ...] | None] = []

    def headline(progress=None, packages=None, emulate=False):
        asked.append(None if packages is None else tuple(packages))
        return [Config(name="a"), Config(name="b")], None

    monkeypatch.setattr(configs, "headline_configs", headline)
    return asked


def test_the_default_userspaces_get_the_packages_of_the_run_s_workloads(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _created_with(monkeypatch)
    prepare(build_request(Wish(), quiet), quiet)  # the native suite: a compiler and openssl, not node or fio
    assert asked == [("gcc", "libc6-dev", "coreutils", "openssl", "bash")]
    prepare(build_request(Wish(workloads=["flac"]), quiet), quiet)
    assert asked[-1] is not None and "flac" in asked[-1] and "gcc" not in asked[-1]


def test_a_run_with_a_user_s_command_creates_userspaces_with_the_whole_catalogue(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _created_with(monkeypatch)
    path = tmp_path / "shootout.toml"  # its command may call any program a userspace has
    path.write_text('[[workload]]\nname = "pack"\ncommand = "xz -9 < /etc/services > /dev/null"\n')
    prepare(build_request(Wish(file=path), quiet), quiet)
    assert asked == [workload_packages()]


def test_userspaces_named_with_c_are_made_together_with_the_run_s_packages(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from shootout.configs import userspaces as configs

    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path))  # the journal of the creates
    made: list[tuple[str, str, str, tuple[str, ...]]] = []
    monkeypatch.setattr(configs, "create_userspace",
                        lambda name, arch, release, packages=None, **kw: made.append((name, arch, release, packages)))
    monkeypatch.setattr(configs, "_ready", lambda name: False)
    monkeypatch.setattr(configs, "preflight", lambda *args: None)
    monkeypatch.setattr(configs, "private_mounts", lambda: None)
    request = prepare(build_request(Wish(configs=["debian:bookworm:amd64", "debian:bookworm:i386"],
                                         workloads=["intmix"]), quiet), quiet)
    assert [c.userspace for c in request.configs] == ["debian-bookworm-amd64", "debian-bookworm-i386"]
    assert sorted(made) == [("debian-bookworm-amd64", "amd64", "bookworm", ("gcc", "libc6-dev")),
                            ("debian-bookworm-i386", "i386", "bookworm", ("gcc", "libc6-dev"))]
