"""Configurations from spec strings and shootout.toml, and whether each can run here.

Spec strings: the forms of the target kinds (shootout.places: host, debian:RELEASE:ARCH,
ssh:[USER@]HOST[:PORT], ...), or the name of a [[config]] table in shootout.toml.
"""

from __future__ import annotations

import dataclasses
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shootout.base.errors import TargetError, ToolMissing, UsageError
from shootout.base.model import Config
from shootout.configs.groups import expand, group_table
from shootout.execution.build import ABI_FLAGS, ABI_PACKAGES, compile_c
from shootout.parts import config_keys, parse_parts
from shootout.places import KINDS, kind_of, parse_kind_spec
from shootout.places.chroot import userspace_ref_of
from shootout.places.host import HostTarget, x86_abi_problem
from shootout.workloads.catalogue import user_workload

_CONFIG_KEYS = {"name", "spec", "target", "abi", "cc", "cflags", "env", "label", "userspace", "options", "machines",
                "mixed_architectures"}


@dataclass
class FileSettings:
    path: Path | None = None
    configs: dict[str, Config] = field(default_factory=dict)
    workloads: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> [[workload]] table
    run: dict[str, Any] = field(default_factory=dict)  # defaults for `shootout run` options
    params: dict[str, dict[str, Any]] = field(default_factory=dict)  # workload -> parameter overrides


def parse_spec(spec: str, named: dict[str, Config] | None = None) -> Config:
    """The configuration a spec or a [[config]] name names. Parsing only: a debian:RELEASE:ARCH
    userspace is named, made when a run is about to use it (configs.userspaces)."""
    if named and spec in named:
        return named[spec]
    return parse_kind_spec(spec)


_ABI_PROBE = b'#include <stdio.h>\nint main(void) { puts("ok"); return 0; }\n'


def abi_problem(config: Config) -> str | None:
    """Why a host configuration's compiler ABI cannot build and run here, or None."""
    if not kind_of(config).host_abi or config.abi is None:
        return None
    if problem := x86_abi_problem(config.abi):
        return problem[0]
    flags = list(ABI_FLAGS[config.abi])
    target = HostTarget(config)
    try:
        # Built fresh in the work directory, not cached: the answer must be about now.
        binary = compile_c(target, "abiprobe", {"abiprobe.c": _ABI_PROBE}, flags, cc=config.cc,
                           into=target.workdir())
        ran = target.run([binary.path], timeout=60)
    except ToolMissing:
        return f"{config.cc} not found (install gcc)"
    except TargetError:
        return f"{config.cc} {' '.join(flags)} cannot build programs here (install {ABI_PACKAGES[config.abi]})"
    except OSError as exc:
        return f"this kernel cannot run {config.abi} programs ({exc.strerror}; no {config.abi} ABI support)"
    finally:
        target.close()
    if ran.exit_status != 0:
        return f"this kernel cannot run {config.abi} programs (exit {ran.exit_status})"
    return None


def _config_from_table(table: dict[str, Any], where: str) -> Config:
    allowed = _CONFIG_KEYS | config_keys()
    unknown = set(table) - allowed
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}", "allowed: " + ", ".join(sorted(allowed)))
    name = table.get("name")
    if not isinstance(name, str) or not name:
        raise UsageError(f"{where}: a [[config]] needs a name", 'add name = "..."')
    group: tuple[tuple[str, str], ...] = ()
    if "machines" in table or "mixed_architectures" in table:  # a group of machines (groups.py)
        if "spec" in table:
            raise UsageError(f"{where}: {name} has both spec and machines",
                             "a group's machines are its targets: drop spec, or machines")
        group = group_table(name, table.get("machines"), table.get("mixed_architectures", False), where)
    # a file only names its userspaces (reading it, e.g. a named experiment's, makes nothing)
    base = parse_spec(table["spec"]) if "spec" in table else Config(name=name)
    cflags = table.get("cflags", ())
    if isinstance(cflags, str):
        cflags = shlex.split(cflags)
    env, options = table.get("env", {}), table.get("options", {})
    if not isinstance(env, dict):
        raise UsageError(f"{where}: env must be a table", 'env = { NAME = "value" }')
    if not isinstance(options, dict):
        raise UsageError(f"{where}: options must be a table", 'options = { NAME = "value" }')
    userspace, target = table.get("userspace", base.userspace), table.get("target", base.target)
    # a userspace named here instead of the spec's is not the debian:RELEASE:ARCH it made
    ref = base.userspace_ref if userspace == base.userspace else None
    kind = KINDS.get(target)
    if ref is None and userspace and kind is not None and kind.userspace:
        ref = userspace_ref_of(userspace)  # a userspace of the registry this file names itself
    abi = table.get("abi", base.abi)
    if abi not in ABI_FLAGS:
        raise UsageError(f"{where}: unknown abi {abi!r}", "use m32 or mx32, or leave it out")
    return dataclasses.replace(
        base,
        name=name,
        target=target,
        label=table.get("label", name),
        abi=abi,
        cc=table.get("cc", base.cc),
        cflags=(*base.cflags, *cflags),
        env=(*base.env, *((str(k), str(v)) for k, v in env.items())),
        userspace=userspace,
        userspace_ref=ref,
        options=tuple({**dict(base.options), **{str(k): str(v) for k, v in options.items()}}.items()) + group,
        parts={**base.parts, **parse_parts(table, where)},
    )


def load_file(path: Path) -> FileSettings:
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file", "pass --file with an existing shootout.toml") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}", "check the path and its permissions") from None
    settings = load_text(text, str(path))
    settings.path = path
    return settings


def parse_toml(text: str, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{where}: malformed TOML: {exc}", "fix the file at that line") from None


def load_text(text: str, where: str) -> FileSettings:
    """[run], [[config]], [[workload]] and [params.WORKLOAD] tables from TOML text."""
    return load_data(parse_toml(text, where), where)


def load_data(data: dict[str, Any], where: str) -> FileSettings:
    """The tables of parsed TOML (load_text's, or a named experiment's at a size of its own)."""
    settings = FileSettings(run=dict(data.get("run", {})))
    for i, table in enumerate(data.get("config", []), 1):
        config = _config_from_table(table, f"{where}: [[config]] #{i}")
        settings.configs[config.name] = config
    for i, table in enumerate(data.get("workload", []), 1):
        if not isinstance(table, dict) or "name" not in table:
            raise UsageError(f"{where}: [[workload]] #{i} needs a name", 'add name = "..."')
        user_workload(table, where)  # checked whole when the file is read (its unit too), before anything runs
        settings.workloads[table["name"]] = dict(table)
    for name, table in data.get("params", {}).items():
        if not isinstance(table, dict):
            raise UsageError(f"{where}: [params.{name}] must be a table", f"[params.{name}]\nNAME = VALUE")
        settings.params[name] = dict(table)
    unknown = set(data) - {"run", "config", "workload", "params"}
    if unknown:
        raise UsageError(f"{where}: unknown section(s) {', '.join(sorted(unknown))}",
                         "use [run], [[config]], [[workload]] and [params.WORKLOAD]")
    return settings


def resolve(specs: list[str], named: dict[str, Config]) -> list[Config]:
    """A run's configurations; their userspaces only named (the run makes the missing ones)."""
    configs = [member for s in specs
               for member in expand(parse_spec(s, named), lambda m: parse_spec(m, named))]
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise UsageError("a configuration is named twice", "use --aa to compare a configuration with itself")
    return configs

