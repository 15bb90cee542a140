"""The execution layer's protocol: every target is a Place."""

from __future__ import annotations


def test_every_target_kind_is_a_place() -> None:
    """What build, net, userspace and vm type against, every target offers."""
    from shootout.base.model import Config
    from shootout.execution.place import Place
    from shootout.places.fake import FakeTarget
    from shootout.places.host import HostTarget

    for target in (HostTarget(Config(name="host")), FakeTarget(Config(name="fake", target="fake"))):
        try:
            assert isinstance(target, Place)
        finally:
            target.close()
    assert not isinstance(object(), Place)
