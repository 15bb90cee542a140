"""Places to run: where a configuration's commands run (kind.py says what a kind is).

Each place is one module holding its Kind (spec forms, parser, hint, capability flags) and its
Target class, and one line below; the order of the lines is the order in which specs are tried
and shown. The spec forms in the --config help and in the hints, parse_spec
(shootout.configs.specs) and make_target are derived from the registry (shootout.places.kind);
the rest of shootout asks a configuration's kind (kind_of) for its capabilities instead of
comparing Config.target with names.
"""

from __future__ import annotations

from shootout.base.model import Config
from shootout.places import chroot, fake, host, image, ssh, vm
from shootout.places.kind import (
    KINDS,
    LOCAL,
    config_help,
    kind_of,
    machine_key,
    parse_kind_spec,
    register,
    scratch_holders,
    spec_forms,
    target_hint,
)
from shootout.places.target import Target
from shootout.system.journal import Journal

register(host.HostKind())
register(chroot.ChrootKind())
register(image.ImageKind())
register(ssh.SshKind())
register(vm.VmKind())
register(fake.FakeKind())

__all__ = ["KINDS", "LOCAL", "config_help", "kind_of", "machine_key", "make_target", "parse_kind_spec", "runs_emulated", "scratch_holders",
           "spec_forms", "target_hint", "target_problem"]


def target_problem(config: Config) -> str | None:
    """Why the configuration's target cannot be used here, in one line, before anything starts."""
    return kind_of(config).problem(config)


def runs_emulated(config: Config) -> bool:
    """A configuration that --emulate puts under an emulator here (a VM without hardware KVM): no verdicts."""
    return kind_of(config).emulated_here(config)


def make_target(config: Config, journal: Journal) -> Target:
    target = kind_of(config).target(config, journal)
    assert isinstance(target, Target), f"{kind_of(config).target} is not a Target"
    return target
