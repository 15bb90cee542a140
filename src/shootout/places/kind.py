"""What a target kind is: one kind of place where a configuration's commands run.

A place to run lives in one module that holds its Kind and its Target, and is registered with
one line in shootout/places/__init__.py (a real import of the module).
Everything else about kinds is derived from that registry: the configuration specs
parse_spec accepts, the --config help and the hints of errors about specs and targets,
make_target, and the capability flags the rest of shootout asks instead of comparing
Config.target with names.

  name           Config.target of its configurations
  forms          the spec forms it parses, as help and hints show them ("ssh:[USER@]HOST[:PORT]")
  hint           one line: how to write its spec, shown with an error about a spec of its
                 forms (or a configuration that lacks what its spec gives)
  target         the Target class it makes (defined in the same module)
  parse(spec)    its Config for a spec in one of its forms, None for any other spec;
                 UsageError for a spec of its form that is malformed. No side effects: what
                 the configuration needs (a userspace) is only named, made when a run uses it
  machine(config)  the other machine its trials run on (lanes run them in parallel), or None
  problem(config)  why it cannot be used here, in one line, before anything starts
  emulate(config)  the configuration under --emulate; emulated_here(config): whether it then
                 runs under an emulator here (no verdicts)
  prepare(config, say)  the configuration completed, before the run, with what only the machine
                 can tell (a brought image unpacked and its root's architecture read); itself
                 for most kinds

Capability flags (class attributes):
  elsewhere      its commands run on another machine than shootout's (a VM, over ssh): the
                 parts that change this machine are refused for it
  this_kernel    its programs are processes of this machine's kernel (they can enter its
                 namespaces by /proc/PID, and measure this machine)
  userspace      its programs are those of a shootout userspace (Config.userspace), whose
                 architecture fixes their ABI
  host_abi       its programs are this machine's own, built with the configuration's ABI
                 (-m32, -mx32): their ABI is the host's or its 32-bit side
  disk_scratch   it can hold a disk scratch (the device under test) for disk workloads
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from shootout.base.errors import UsageError
from shootout.base.model import Config


class Kind:
    name: ClassVar[str]
    forms: ClassVar[tuple[str, ...]] = ()  # none: not written as a spec (the tests' fake)
    hint: ClassVar[str] = ""
    target: ClassVar[Callable[..., Any]]  # its Target class: (config, journal) -> Target
    elsewhere: ClassVar[bool] = False
    this_kernel: ClassVar[bool] = False
    userspace: ClassVar[bool] = False
    host_abi: ClassVar[bool] = False
    disk_scratch: ClassVar[bool] = False
    scripted: ClassVar[bool] = False  # its commands' output is scripted (the tests' fake): nothing to count

    def parse(self, spec: str) -> Config | None:
        return None

    def machine(self, config: Config) -> str | None:
        return None

    def problem(self, config: Config) -> str | None:
        return None

    def emulate(self, config: Config) -> Config:
        return config

    def emulated_here(self, config: Config) -> bool:
        return False

    def prepare(self, config: Config, say: Callable[[str], None]) -> Config:
        return config


# The registry: filled by shootout/places/__init__.py, one line per kind, in the order specs are
# tried and shown. It lives here, below the place modules, so that they can ask it too.
KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> None:
    KINDS[kind.name] = kind


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


LOCAL = "this machine"


def machine_key(config: Config) -> str:
    """The machine a configuration's trials run on: LOCAL, or the remote's address."""
    return kind_of(config).machine(config) or LOCAL
