"""wireguard-go as users run it: a current release, built for the side's architecture; the
host's go is used as is from 1.21 on, and an unknown architecture is one line naming the way out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shootout.base.errors import TargetError
from shootout.net import wggo
from shootout.net.options import NetOptions
from shootout.net.tunnels import tunnel_setting


def fake_go(tmp_path: Path, version: str) -> str:
    go = tmp_path / "go"
    go.write_text(f'#!/bin/sh\n[ "$2" = GOVERSION ] && echo {version} && exit 0\necho "unexpected: $*" >&2; exit 1\n')
    go.chmod(0o755)
    return str(go)


def test_a_go_that_switches_toolchains_itself_is_used_as_is(tmp_path: Path) -> None:
    go = fake_go(tmp_path, "go1.22.2")
    assert wggo.toolchain(go, dict(os.environ)) == (go, dict(os.environ))


def test_a_failing_go_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="go env GOVERSION failed: boom"):
        wggo.toolchain(str(_failing(tmp_path)), dict(os.environ))


def _failing(tmp_path: Path) -> Path:
    go = tmp_path / "go"
    go.write_text("#!/bin/sh\necho boom >&2; exit 2\n")
    go.chmod(0o755)
    return go


def test_the_release_is_what_is_compared_and_an_unknown_architecture_is_refused() -> None:
    assert tunnel_setting(NetOptions(vpn="wireguard", wireguard="go")) == {
        "kind": "wireguard", "implementation": "go", "release": wggo.RELEASE}
    assert tunnel_setting(NetOptions(vpn="wireguard", wireguard="debian")) == {
        "kind": "wireguard", "implementation": "debian"}
    assert "built for armhf from the Go module proxy" in wggo.describe("armhf")
    with pytest.raises(TargetError, match="no Go port for the Debian architecture 'sparc'"):
        wggo.build("sparc")
