"""Pure parts of the userspace machinery: registry states, confounders, ABI checks, paths in a root."""

from __future__ import annotations

import http.server
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from shootout.base.errors import TargetError, ToolMissing, UsageError
from shootout.base.model import Config, UserspaceRef
from shootout.configs import abi
from shootout.configs import userspaces as configs
from shootout.places.chroot import named_userspace_config
from shootout.system import mounts
from shootout.userspace import binfmt, create, registry
from shootout.userspace.arches import arch
from shootout.userspace.rootfs import resolve_in_root, which_in_root


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path))
    return tmp_path


def fake_userspace(name: str, arch_name: str, packages: dict[str, str], *, ready: bool = True,
                   prefix: str = "") -> Path:
    path = registry.userspaces_dir() / f"{prefix}{name}"
    (path / "root").mkdir(parents=True)
    registry.write_meta(path, {"name": name, "arch": arch_name, "release": "bookworm", "ready": ready,
                               "packages": packages})
    return path


# -- registry ---------------------------------------------------------------------------------


def test_states_ready_incomplete_updating(home: Path) -> None:
    fake_userspace("a", "amd64", {"x": "1"})
    fake_userspace("b", "i386", {}, prefix=registry.INCOMPLETE)
    fake_userspace("c", "i386", {}, ready=False)
    updating = fake_userspace("d", "i386", {"x": "1"})
    (updating / registry.UPDATING).touch()
    states = {u.name: u.state for u in registry.list_userspaces()}
    assert states == {"a": "ready", "b": "incomplete", "c": "incomplete", "d": "incomplete"}
    assert registry.get_ready("a").arch == "amd64"
    for name in ("b", "c", "d"):
        with pytest.raises(TargetError, match="incomplete"):
            registry.get_ready(name)
    with pytest.raises(UsageError) as err:
        registry.get_ready("nope")
    assert "shootout userspace list" in err.value.hint


def test_bad_names_rejected(home: Path) -> None:
    for bad in ("", "../etc", "Upper", "a/b", ".hidden", "x" * 80):
        with pytest.raises(UsageError):
            registry.check_name(bad)


def test_remove_deletes_ready_and_incomplete(home: Path) -> None:
    fake_userspace("gone", "amd64", {})
    fake_userspace("gone", "amd64", {}, prefix=registry.INCOMPLETE)
    removed = registry.remove_userspace("gone")
    assert len(removed) == 2
    assert registry.find("gone") == []
    with pytest.raises(UsageError):
        registry.remove_userspace("gone")


def test_a_userspace_a_run_is_using_is_never_removed(home: Path) -> None:
    fake_userspace("busy", "amd64", {})
    claim = registry.claim("busy")  # what an open chroot target holds
    try:
        with pytest.raises(TargetError, match="in use by a running shootout"):
            registry.remove_userspace("busy")
        assert [u.state for u in registry.find("busy")] == ["ready"]
    finally:
        claim.close()
    assert registry.remove_userspace("busy") and registry.find("busy") == []


def test_lock_refuses_a_second_holder(home: Path) -> None:
    with registry.locked("busy", wait=False), pytest.raises(TargetError, match="another shootout process"), \
            registry.locked("busy", wait=False):
        pass


# -- confounders ------------------------------------------------------------------------------


def test_confounders_list_only_differing_versions(home: Path) -> None:
    fake_userspace("u64", "amd64", {"openssl": "3.0.15-1~deb12u1", "gcc": "4:12.2.0-3", "libpmem1": "1.12"})
    fake_userspace("u32", "i386", {"openssl": "3.0.14-1", "gcc": "4:12.2.0-3", "isa-support": "15.1"})
    # packages only one arch needs are not confounders
    assert registry.version_confounders(["u64", "u32"]) == [
        "openssl: 3.0.15-1~deb12u1 (u64) vs 3.0.14-1 (u32)"
    ]
    assert registry.version_confounders(["u64", "u32"], ["gcc"]) == []
    assert registry.version_confounders(["u64", "u32"], ["libpmem1"]) == [
        "libpmem1: 1.12 (u64) vs not installed (u32)"
    ]


def test_confounders_group_equal_versions(home: Path) -> None:
    fake_userspace("a", "amd64", {"zstd": "1"})
    fake_userspace("b", "i386", {"zstd": "2"})
    fake_userspace("c", "armhf", {"zstd": "1"})
    assert registry.version_confounders(["a", "b", "c"]) == ["zstd: 1 (a, c) vs 2 (b)"]


def test_identical_userspaces_have_no_confounders(home: Path) -> None:
    versions = {"openssl": "3.0.15", "libc6": "2.36-9"}
    fake_userspace("a", "amd64", versions)
    fake_userspace("b", "i386", versions)
    assert registry.version_confounders(["a", "b"]) == []
    assert registry.package_versions("b") == versions


# -- ABI verification -------------------------------------------------------------------------


def test_verify_abi_by_userspace_arch(home: Path) -> None:
    fake_userspace("debian-bookworm-i386", "i386", {})
    fake_userspace("debian-bookworm-amd64", "amd64", {})
    c32 = Config(name="debian:bookworm:i386", target="chroot", userspace="debian-bookworm-i386")
    c64 = Config(name="debian:bookworm:amd64", target="chroot", userspace="debian-bookworm-amd64")
    elf32 = {"elf_class": 32, "machine": "x86", "interpreter": "/lib/ld-linux.so.2"}
    elf64 = {"elf_class": 64, "machine": "x86-64", "interpreter": "/lib64/ld-linux-x86-64.so.2"}
    abi.verify_abi(c32, elf32)
    abi.verify_abi(c64, elf64)
    with pytest.raises(TargetError, match="32-bit x86 .* but ran a 64-bit"):
        abi.verify_abi(c32, elf64)
    with pytest.raises(TargetError, match="64-bit x86-64 .* but ran a 32-bit"):
        abi.verify_abi(c64, elf32)
    abi.verify_abi(c32, {})  # a script: nothing to verify


def test_verify_abi_host_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(abi, "host_arch", lambda: "amd64")
    m32 = Config(name="host+m32", abi="m32")
    mx32 = Config(name="host+mx32", abi="mx32")
    abi.verify_abi(m32, {"elf_class": 32, "machine": "x86"})
    abi.verify_abi(mx32, {"elf_class": 32, "machine": "x86-64"})
    with pytest.raises(TargetError):
        abi.verify_abi(m32, {"elf_class": 32, "machine": "x86-64"})
    with pytest.raises(TargetError):
        abi.verify_abi(Config(name="host"), {"elf_class": 32, "machine": "x86"})


def test_arm_arches_by_name(home: Path) -> None:
    armhf = Config(name="debian:bookworm:armhf", target="chroot", userspace="missing-armhf",
                   userspace_ref=UserspaceRef("bookworm", "armhf"))  # as the parser of debian:bookworm:armhf sets it
    abi.verify_abi(armhf, {"elf_class": 32, "machine": "arm"})
    with pytest.raises(TargetError):
        abi.verify_abi(armhf, {"elf_class": 64, "machine": "aarch64"})


def test_unknown_arch_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown architecture 'sparc99'") as err:
        arch("sparc99")
    assert "armhf" in err.value.hint


# -- paths inside a root ----------------------------------------------------------------------


def test_symlinks_resolve_against_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "usr/bin").mkdir(parents=True)
    (root / "usr/lib").mkdir(parents=True)
    tool = root / "usr/bin/7zz"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    (root / "bin").symlink_to("usr/bin")  # merged /usr
    (root / "usr/bin/7z").symlink_to("/usr/bin/7zz")  # absolute: must stay inside the root
    (root / "usr/bin/up").symlink_to("../../../../../usr/bin/7zz")  # cannot climb out
    (root / "usr/bin/loop").symlink_to("loop")
    assert resolve_in_root(root, "/bin/7z") == tool
    assert resolve_in_root(root, "/usr/bin/up") == tool
    assert resolve_in_root(root, "/usr/bin/loop") is None
    assert resolve_in_root(root, "/usr/bin/none") is None
    assert which_in_root(root, "7z", "/usr/local/bin:/bin") == "/bin/7z"
    assert which_in_root(root, "none", "/bin") is None
    (root / "usr/bin/plain").write_text("not executable")
    assert which_in_root(root, "plain", "/usr/bin") is None


def test_mountinfo_unescape() -> None:
    from shootout.execution.fsread import unescape

    assert unescape(r"/a\040b\011c\134d") == "/a b\tc\\d"


def test_safe_rmtree_refuses_a_tree_with_a_mount(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = tmp_path / "t"
    (tree / "x").mkdir(parents=True)
    monkeypatch.setattr(mounts, "mounts_under", lambda p: [str(tree / "x")])
    with pytest.raises(TargetError, match="is in use"):
        mounts.safe_rmtree(tree)
    assert tree.exists()


# -- binfmt line --------------------------------------------------------------------------------


def test_binfmt_line_from_package_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    line = r":qemu-arm:M::\x7fELF\x01:\xff\xff:/usr/libexec/qemu-binfmt/arm-binfmt-P:OP"
    (tmp_path / "qemu-arm.conf").write_text(line + "\n")
    monkeypatch.setattr(binfmt, "BINFMT_D", (tmp_path,))
    entry, registered = binfmt.registration("armhf")
    assert entry == "qemu-arm"
    assert registered == line + "F"  # fix-binary added: nothing to copy into the chroot
    with pytest.raises(ToolMissing) as err:
        binfmt.registration("arm64")
    assert err.value.package == "qemu-user-static"


# -- host release, mirror probe, headline fallback ----------------------------------------------


def test_host_release(tmp_path: Path) -> None:
    f = tmp_path / "os-release"
    f.write_text('ID=debian\nVERSION_CODENAME=bookworm\n')
    assert create.host_release(f) == "bookworm"
    f.write_text('ID=ubuntu\nVERSION_CODENAME=jammy\n')
    assert create.host_release(f) is None
    assert create.host_release(tmp_path / "missing") is None


class _Mirror(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/debian/dists/bookworm/Release":
            body = b"Origin: Debian\nArchitectures: all amd64 arm64 armhf i386\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_error(404)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def mirror() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Mirror)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/debian"
    server.shutdown()


def test_probe_mirror(mirror: str) -> None:
    create.probe_mirror(mirror, "bookworm", "i386")
    with pytest.raises(TargetError, match="release 'bogus' is not on the mirror"):
        create.probe_mirror(mirror, "bogus", "i386")
    with pytest.raises(TargetError, match="has no riscv64 packages"):
        create.probe_mirror(mirror, "bookworm", "riscv64")
    with pytest.raises(TargetError, match="cannot reach the mirror"):
        create.probe_mirror("http://127.0.0.1:9/debian", "bookworm", "i386")


def test_headline_fallback_reasons(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the host's arches are the test's, whatever machine runs it (an arm64 CI too)
    monkeypatch.setattr(configs, "host_arch", lambda: "ppc64el")
    monkeypatch.setattr(configs, "kernel_arch", lambda: "ppc64el")
    found, reason = configs.headline_configs()
    assert found == [] and reason is not None and "no 32-bit companion userspace for ppc64el" in reason
    monkeypatch.setattr(configs, "host_arch", lambda: "amd64")
    monkeypatch.setattr(configs, "kernel_arch", lambda: "amd64")
    monkeypatch.setattr(configs, "arch_problem", lambda a: None)
    monkeypatch.setattr(configs, "host_release", lambda: None)
    assert "not a Debian release" in configs.headline_configs()[1]
    monkeypatch.setattr(configs, "host_release", lambda: "bookworm")
    monkeypatch.setattr(configs.os, "geteuid", lambda: 1000)
    assert configs.headline_configs()[0] == []
    assert "root" in configs.headline_configs()[1]


def test_headline_uses_existing_userspaces(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(configs, "host_arch", lambda: "amd64")
    monkeypatch.setattr(configs, "kernel_arch", lambda: "amd64")
    monkeypatch.setattr(configs, "arch_problem", lambda a: None)  # i386 runs natively on amd64
    monkeypatch.setattr(configs, "host_release", lambda: "bookworm")
    monkeypatch.setattr(configs.os, "geteuid", lambda: 0)
    fake_userspace("debian-bookworm-amd64", "amd64", {})
    fake_userspace("debian-bookworm-i386", "i386", {})
    found, reason = configs.headline_configs()
    assert reason is None
    assert [c.name for c in found] == ["debian:bookworm:amd64", "debian:bookworm:i386"]
    assert [c.userspace for c in found] == ["debian-bookworm-amd64", "debian-bookworm-i386"]
    assert all(c.target == "chroot" for c in found)


def test_named_userspace_config(home: Path) -> None:
    fake_userspace("pi-os", "armhf", {})
    c = named_userspace_config("pi-os")
    assert (c.target, c.userspace, c.name) == ("chroot", "pi-os", "userspace:pi-os")
    with pytest.raises(UsageError) as err:
        named_userspace_config("nope")
    assert err.value.hint.startswith("shootout userspace list")


def test_meta_written_atomically(home: Path) -> None:
    path = fake_userspace("m", "amd64", {"a": "1"})
    registry.write_meta(path, {"ready": True, "packages": {"a": "2"}})
    assert json.loads((path / registry.META).read_text())["packages"] == {"a": "2"}
    assert not any(p.name.endswith(".tmp") for p in path.iterdir())
    assert os.access(path / registry.META, os.R_OK)


def test_downloads_are_shared_between_data_directories(tmp_path, monkeypatch):
    """A create's verified packages join the user's store; a create in another data directory
    starts from them (its own arch's packages, and arch:all ones from any arch)."""
    from shootout.userspace import create

    monkeypatch.setattr(create, "shared_cache_dir", lambda: tmp_path / "store")
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "first"))
    first = create._arch_cache("bookworm", "amd64")
    for name in ("libc6_2.36_amd64.deb", "tzdata_2024a_all.deb"):
        (first / name).write_bytes(b"deb " + name.encode())
    create._publish_downloads(first)
    assert sorted(p.name for p in (tmp_path / "store/debootstrap/bookworm-amd64").iterdir()) == [
        "libc6_2.36_amd64.deb", "tzdata_2024a_all.deb"]  # no temporary file left

    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "second"))
    again = create._arch_cache("bookworm", "amd64")
    assert (again / "libc6_2.36_amd64.deb").read_bytes() == b"deb libc6_2.36_amd64.deb"
    other = create._arch_cache("bookworm", "i386")
    assert sorted(p.name for p in other.iterdir()) == ["tzdata_2024a_all.deb"]  # not amd64's libc6


# -- the userspace a configuration names, by release and arch ----------------------------------


def test_parsers_say_release_and_arch_and_nothing_reads_them_from_the_name(home: Path) -> None:
    from shootout.configs.specs import load_text, parse_spec
    from shootout.configs.userspaces import _missing

    i386 = parse_spec("debian:bookworm:i386")
    assert (i386.userspace, i386.userspace_ref) == ("debian-bookworm-i386", UserspaceRef("bookworm", "i386"))
    assert _missing(i386) == ("bookworm", "i386")  # not made yet: made from the ref
    assert abi.config_arch(i386) == "i386"
    vm = parse_spec("vm:debian:trixie:armhf:armmp-lpae")
    assert vm.userspace_ref == UserspaceRef("trixie", "armhf")
    fake_userspace("mine", "amd64", {})
    assert parse_spec("userspace:mine").userspace_ref == UserspaceRef("bookworm", "amd64")  # as registered
    assert parse_spec("host").userspace_ref is None
    # the same name, another userspace: the ref is not the spec's but what the registry records
    renamed = load_text('[[config]]\nname = "x"\nspec = "debian:bookworm:i386"\nuserspace = "mine"\n', "t")
    assert [c.userspace_ref for c in renamed.configs.values()] == [UserspaceRef("bookworm", "amd64")]
    by_hand = load_text('[[config]]\nname = "y"\ntarget = "chroot"\nuserspace = "mine"\n'
                        '[[config]]\nname = "z"\ntarget = "chroot"\nuserspace = "debian-bookworm-armhf"\n', "t")
    # a ready userspace: as registered; one not made yet, named as shootout names them: made on first use
    assert [c.userspace_ref for c in by_hand.configs.values()] == [UserspaceRef("bookworm", "amd64"),
                                                                  UserspaceRef("bookworm", "armhf")]
    assert _missing(by_hand.configs["z"]) == ("bookworm", "armhf")
    other = load_text('[[config]]\nname = "o"\ntarget = "chroot"\nuserspace = "pi-os-lite"\n', "t")
    assert other.configs["o"].userspace_ref is None  # any other name says nothing
    named = Config(name="debian:bookworm:armhf", target="chroot", userspace="debian-bookworm-armhf")
    assert _missing(named) is None and abi.config_arch(named) is None  # a name alone says nothing
