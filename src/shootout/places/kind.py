"""What a target kind is: one kind of place where a configuration's commands run.

A kind lives in one module and is registered with one line in shootout/places/__init__.py.
Everything else about kinds is derived from that registry: the configuration specs
parse_spec accepts, the --config help and the hints of errors about specs and targets,
make_target, and the capability flags the rest of shootout asks instead of comparing
Config.target with names.

  name           Config.target of its configurations
  forms          the spec forms it parses, as help and hints show them ("ssh:[USER@]HOST[:PORT]")
  hint           one line: how to write its spec, shown with an error about a spec of its
                 forms (or a configuration that lacks what its spec gives)
  target         "module:Class" of the Target it makes, imported by make_target only (this
                 package stays below the targets: parts, workloads and userspace ask it)
  parse(spec)    its Config for a spec in one of its forms, None for any other spec;
                 UsageError for a spec of its form that is malformed. No side effects: what
                 the configuration needs (a userspace) is only named, made when a run uses it
  machine(config)  the other machine its trials run on (lanes run them in parallel), or None
  problem(config)  why it cannot be used here, in one line, before anything starts
  emulate(config)  the configuration under --emulate; emulated_here(config): whether it then
                 runs under an emulator here (no verdicts)

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

from typing import ClassVar

from shootout.base.model import Config


class Kind:
    name: ClassVar[str]
    forms: ClassVar[tuple[str, ...]] = ()  # none: not written as a spec (the tests' fake)
    hint: ClassVar[str] = ""
    target: ClassVar[str]
    elsewhere: ClassVar[bool] = False
    this_kernel: ClassVar[bool] = False
    userspace: ClassVar[bool] = False
    host_abi: ClassVar[bool] = False
    disk_scratch: ClassVar[bool] = False

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
