"""Target kinds: where a configuration's commands run (see base.py for what a kind is).

Each kind is one module with one class and one line in KINDS below; the order of KINDS is
the order in which specs are tried and shown. The spec forms in the --config help and in
the hints, parse_spec (shootout.configs.parse) and make_target (shootout.places.factory) are
derived from it; the rest of shootout asks a configuration's kind (kind_of) for its
capabilities instead of comparing Config.target with names.
"""

from __future__ import annotations

from shootout.base.errors import UsageError
from shootout.places.kind import Kind
from shootout.places.chroot import ChrootKind
from shootout.places.fake import FakeKind
from shootout.places.host import HostKind
from shootout.places.ssh import SshKind
from shootout.places.vm import VmKind
from shootout.base.model import Config

KINDS: dict[str, Kind] = {k.name: k for k in (
    HostKind(),
    ChrootKind(),
    SshKind(),
    VmKind(),
    FakeKind(),
)}


def kind_of(config: Config) -> Kind:
    """The kind of the configuration's target; UsageError for a target no kind is."""
    kind = KINDS.get(config.target)
    if kind is None:
        raise UsageError(f"unknown target {config.target!r} in configuration {config.name}", target_hint())
    return kind


def target_hint() -> str:
    """How to name a target (the kinds written as specs)."""
    names = [k.name for k in KINDS.values() if k.forms]
    return f"use {', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else f"use {names[0]}"


def scratch_holders() -> str:
    """The kinds that can hold a disk scratch, for a hint."""
    return ", ".join(k.name for k in KINDS.values() if k.disk_scratch and k.forms)


def spec_forms() -> list[str]:
    return [form for kind in KINDS.values() for form in kind.forms]


def config_help() -> str:
    """The --config help: every spec form, then the names a shootout.toml adds."""
    return f"configuration: {', '.join(spec_forms())}, or a [[config]] name"


def parse_kind_spec(spec: str) -> Config:
    """The configuration a spec string names; UsageError naming every form for any other."""
    for kind in KINDS.values():
        if (config := kind.parse(spec)) is not None:
            return config
    raise UsageError(f"unknown configuration {spec!r}",
                     f"use {', '.join(spec_forms())} or a [[config]] name from shootout.toml")
