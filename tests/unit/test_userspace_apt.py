"""apt inside a userspace without a userspace: sources, update warnings, one version on every side."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest

from shootout.base.errors import TargetError
from shootout.execution.process import ProcResult
from shootout.userspace import apt
from shootout.userspace.apt import (
    _pin_file,
    common_versions,
    missing_package,
    sources_list,
    update_sources,
    update_warnings,
)


def result(stdout: str = "", stderr: str = "", status: int = 0) -> ProcResult:
    return ProcResult(("x",), status, stdout, stderr, 1.0, 0.5, 0.1, 1000, 3, 0.0)


class Scripted:
    """The part of a chroot target apt.py uses: files in a dict, commands answered from a table
    (argv prefix -> ProcResult)."""

    def __init__(self, files: dict[str, bytes] | None = None,
                 answers: dict[tuple[str, ...], ProcResult] | None = None) -> None:
        self.files = dict(files or {})
        self.answers = answers or {}
        self.userspace = SimpleNamespace(name="u", release="bookworm", arch="i386", meta={"mirror": "http://m/debian"},
                                         brought=False)

    def read(self, path: str) -> bytes:
        if path not in self.files:
            raise TargetError(f"no {path}", "")
        return self.files[path]

    def put(self, data: bytes, dest: str) -> str:
        self.files[dest] = data
        return dest

    def workdir(self) -> str:
        return "/work"

    def run(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, timeout: float = 0) -> ProcResult:
        return next((r for prefix, r in self.answers.items() if tuple(argv[:len(prefix)]) == prefix), result())


def test_sources_list_adds_updates_and_security_to_a_release():
    assert sources_list("bookworm", "http://m/debian").splitlines() == [
        "deb http://m/debian bookworm main", "deb http://m/debian bookworm-updates main",
        "deb http://deb.debian.org/debian-security bookworm-security main"]
    assert sources_list("sid", "http://m/debian") == "deb http://m/debian sid main\n"


def test_an_older_userspace_gets_the_new_sources_keeping_its_mirror_and_components():
    target = Scripted({"/etc/apt/sources.list": b"deb http://other/debian bookworm main contrib\n"})
    assert update_sources(target, ["non-free"])  # type: ignore[arg-type]
    assert target.files["/etc/apt/sources.list"].decode() == sources_list("bookworm", "http://other/debian",
                                                                         ["contrib", "non-free"])
    assert not update_sources(target)  # type: ignore[arg-type]
    fresh = Scripted()
    assert update_sources(fresh)  # type: ignore[arg-type]
    assert fresh.files["/etc/apt/sources.list"].decode() == sources_list("bookworm", "http://m/debian")


STALE = ("E: Failed to fetch http://deb.debian.org/debian-security/dists/bookworm-security/main/binary-i386/"
         "Packages.xz  File has unexpected size (346968 != 365336). Mirror sync in progress? [IP: 1.2.3.4 80]\n"
         "E: Some index files failed to download. They have been ignored, or old ones used instead.\n")


def test_a_stale_security_index_is_a_warning_and_a_failed_release_an_error():
    warnings = update_warnings(result(stderr=STALE, status=100), "u", "bookworm")
    assert len(warnings) == 1 and "bookworm-security/main/binary-i386" in warnings[0] and "Mirror sync" in warnings[0]
    assert "IP:" not in warnings[0]
    down = "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Could not resolve 'deb.debian.org'\n"
    with pytest.raises(TargetError, match="apt-get update failed in u"):
        update_warnings(result(stderr=down), "u", "bookworm")
    with pytest.raises(TargetError):
        update_warnings(result(stderr="E: something else\n", status=100), "u", "bookworm")
    assert update_warnings(result(), "u", "bookworm") == []


def test_a_package_the_release_lacks_is_a_one_line_error():
    with pytest.raises(TargetError, match="Debian bookworm has no chromium package for mipsel") as err:
        missing_package(result(stderr="E: Unable to locate package chromium\n", status=100), "u", "mipsel", "bookworm")
    assert "\n" not in str(err.value)
    with pytest.raises(TargetError, match="no chromium package for s390x"):
        missing_package(result(stderr="E: Package 'chromium' has no installation candidate\n", status=100),
                        "u", "s390x", "bookworm")
    missing_package(result(stderr="E: something else\n", status=100), "u", "s390x", "bookworm")  # not this error


def test_the_sides_get_the_newest_version_all_of_them_offer():
    new, old = ["156.0-1", "150.0-1"], ["150.0-1"]
    assert common_versions([{"chromium": new}, {"chromium": old}]) == {"chromium": "150.0-1"}
    assert common_versions([{"chromium": new}, {"chromium": new}]) == {}  # alike already: no pin
    assert common_versions([{"chromium": new}, {"chromium": ["149.0-1"]}]) == {}  # nothing in common
    assert common_versions([{"chromium": new}, {}]) == {}  # one side (the host) does not install
    assert common_versions([{"chromium": old}, {"chromium": new}, {"chromium": new}]) == {"chromium": "150.0-1"}


def test_a_pin_holds_the_whole_source_package():
    shown = result("Package: chromium\nSource: chromium-src\nVersion: 150.0-1\n")
    target = Scripted(answers={("apt-cache", "show"): shown})
    path = _pin_file(target, {"chromium": "150.0-1"})  # type: ignore[arg-type]
    assert target.files[path].decode() == "Package: src:chromium-src\nPin: version 150.0-1\nPin-Priority: 1000\n"
    assert Path(path).parent == Path("/work")
    plain = Scripted()
    assert b"src:chromium\n" in plain.files[_pin_file(plain, {"chromium": "150.0-1"})]  # type: ignore[arg-type]


def test_offers_include_the_dependencies_the_install_would_bring(monkeypatch: pytest.MonkeyPatch):
    """A side whose security index failed offers older libraries: they are pinned alike too."""
    monkeypatch.setattr(apt, "installed_versions", lambda root: {"libc6": "2.36-9"})
    monkeypatch.setattr(apt, "refresh", lambda target, components: [])
    monkeypatch.setattr(apt.registry, "locked", lambda name, wait: contextlib.nullcontext())

    def side(nss: list[str]) -> dict[str, list[str]]:
        plan = result("Inst chromium (150.0-1 Debian:12/stable [i386])\n"
                      f"Inst libnss3 ({nss[0]} Debian:12/stable [i386])\nConf chromium (150.0-1)\n")
        madison = result("  chromium | 150.0-1 | http://m/debian bookworm/main i386 Packages\n" + "".join(
            f"   libnss3 | {v} | http://m/debian bookworm/main i386 Packages\n" for v in nss))
        target = Scripted(answers={("apt-get", "-s"): plan, ("apt-cache", "madison"): madison})
        target.root = Path("/nonexistent")  # type: ignore[attr-defined]
        return apt.offers(target, ["chromium", "libc6"])[0]  # type: ignore[arg-type]

    newer, older = side(["2:3.87.1-1+deb12u4", "2:3.87.1-1+deb12u2"]), side(["2:3.87.1-1+deb12u2"])
    assert older == {"chromium": ["150.0-1"], "libc6": ["2.36-9"], "libnss3": ["2:3.87.1-1+deb12u2"]}
    assert common_versions([newer, older]) == {"libnss3": "2:3.87.1-1+deb12u2"}


def test_a_run_fetches_the_lists_once_and_says_what_apt_ignored_once(monkeypatch: pytest.MonkeyPatch):
    """Workload after workload asks for offers; apt-get update runs (and warns) the first time only."""
    monkeypatch.setattr(apt, "_refreshed", {}, raising=False)  # nothing from earlier tests
    monkeypatch.setattr(apt, "installed_versions", lambda root: {})
    monkeypatch.setattr(apt.registry, "locked", lambda name, wait: contextlib.nullcontext())
    updates: list[tuple[str, ...]] = []

    class Counting(Scripted):
        def run(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, timeout: float = 0) -> ProcResult:
            if tuple(argv[-1:]) == ("update",):
                updates.append(tuple(argv))
            return super().run(argv, env=env, timeout=timeout)

        def remove(self, path: str) -> None:
            self.files.pop(path, None)

    target = Counting(answers={("apt-get", "-o", "Acquire::Retries=3", "update"): result(stderr=STALE, status=100)})
    target.root = Path("/nonexistent")  # type: ignore[attr-defined]
    said = [apt.offers(target, [tool])[1] for tool in ("flac", "lame", "p7zip", "fio", "iozone3", "xz-utils")]  # type: ignore[arg-type]
    assert len(updates) == 1
    assert len(said[0]) == 1 and "bookworm-security" in said[0][0] and said[1:] == [[]] * 5
    apt.offers(target, ["chromium"], ["non-free"])  # type: ignore[arg-type]
    assert len(updates) == 2  # another component: its lists are fetched
