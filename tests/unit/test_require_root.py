"""One root check (errors.require_root) for every place that refuses a non-root user in one line."""

from __future__ import annotations

import pytest

from shootout.base import errors
from shootout.base.errors import TargetError, require_root


def test_a_non_root_user_gets_what_and_the_hint_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(errors.os, "geteuid", lambda: 1000)
    with pytest.raises(TargetError) as refused:
        require_root("creating a userspace", "run as root or use host and host+m32")
    assert str(refused.value) == "creating a userspace needs root (run as root or use host and host+m32)"


def test_root_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(errors.os, "geteuid", lambda: 0)
    require_root("creating a network namespace", "run shootout as root")
