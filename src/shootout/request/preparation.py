"""The preparation step: what a parsed request needs done on this machine before the first trial.

Everything that builds, installs, compiles or probes happens here, in one step the progress
display names (cli/progress.py), after parsing (request.py) and before the load gate:
- the refusals of what this machine would only emulate (qemu-user, a foreign userspace);
- the default comparison (no --config): a native 64-bit userspace against its 32-bit
  companion, both built by debootstrap; when that cannot be done here, host against host+m32;
- the sides that cannot run here (compiler ABI probe, parts, target): a comparison that loses
  every side but one is refused (check_sides); one that keeps two or more runs, and the run
  keeps what it lost and why (facts, shown with it);
- the userspaces named with -c debian:RELEASE:ARCH, made on first use.
"""

from __future__ import annotations

import time
from dataclasses import replace

from shootout.base.errors import UsageError
from shootout.base.model import Config, aa_copy
from shootout.configs.groups import side_names
from shootout.configs.specs import abi_problem, parse_spec, x86_abi_problem
from shootout.measure.runstate import RunRequest
from shootout.parts import parts_problem
from shootout.places import kind_of, target_problem
from shootout.request.request import Notify, Parsed, priced


def default_configs(notify: Notify, progress: Notify, packages: tuple[str, ...] = (),
                    emulate: bool = False) -> list[Config]:
    from shootout.configs.userspaces import headline_configs

    configs, reason = headline_configs(progress=progress, packages=packages, emulate=emulate)
    if configs:
        return configs
    if x86_abi_problem("m32"):  # an ARM machine: no -m32; its 32-bit side is the armhf userspace
        # the default job is a comparison: one side alone would answer nothing it was asked
        raise UsageError(f"cannot make the default comparison's userspaces: {reason}",
                         "fix that, or measure this machine alone with -c host")
    notify(f"not comparing debootstrap userspaces: {reason}; comparing host with host+m32 instead")
    return [parse_spec("host"), parse_spec("host+m32")]


def refuse_emulated(configs: list[Config]) -> None:
    """UsageError for a userspace this ARM machine would run only under qemu (without --emulate),
    before any userspace is made."""
    from shootout.configs.abi import config_arch
    from shootout.userspace.arches import arch_problem

    for config in configs:
        name = config_arch(config) if kind_of(config).userspace else None
        if name and (problem := arch_problem(name)):
            raise UsageError(f"{config.name}: {problem[0]}", problem[1])


def refuse_emulated_host(configs: list[Config] | None) -> None:
    """UsageError when this whole machine runs under qemu-user (without --emulate) and the run would
    measure it (configs None: the default main job), before any userspace is made."""
    from shootout.system.emulator import here

    why = here()
    if why and (configs is None or any(kind_of(c).this_kernel for c in configs)):
        raise UsageError(f"{why}; figures measured here would be the emulator's",
                         "pass --emulate to check that it works (results marked emulated, no verdicts)")


def usable(configs: list[Config]) -> tuple[list[Config], dict[str, str]]:
    """The configurations that can run here, and why each other one cannot (one line each)."""
    kept, lost = [], {}
    for config in configs:
        problem = abi_problem(config) or parts_problem(config) or target_problem(config)
        if problem:
            lost[config.name] = problem
        else:
            kept.append(config)
    return kept, lost


def _why(lost: dict[str, str]) -> str:
    """'a cannot: why', with the configurations that share a reason named together."""
    by_reason: dict[str, list[str]] = {}
    for name, problem in lost.items():
        by_reason.setdefault(problem, []).append(name)
    return "; ".join(f"{', '.join(names)} cannot: {problem}" for problem, names in by_reason.items())


def check_sides(asked: list[Config], kept: list[Config], lost: dict[str, str], aa: bool) -> None:
    """Refuse, in one line, a run whose comparison lost every side but one (or all): what is
    left would be measured alone and 'complete' with nothing compared. A single configuration
    the user asked for (-c host, --aa) is no comparison and may run alone."""
    if not lost:
        return
    if not kept:
        raise UsageError(f"no configuration can run here: {_why(lost)}", "fix that, or try --config host")
    if aa:  # an A/A run measures the first configuration against itself
        if (first := asked[0].name) in lost:
            raise UsageError(f"--aa measures {first}, which cannot run here: {lost[first]}",
                             "fix that, or name another configuration first")
        return
    if len(kept) < 2:
        left = kept[0].name
        raise UsageError(f"nothing to compare: of the {len(asked)} configurations only {left} can run here; "
                         f"{_why(lost)}", f"fix that, or measure {left} alone with -c {left}")


def _ready_userspaces() -> set[str]:
    """The names of the userspaces made and ready on this machine (read, not probed)."""
    from shootout.userspace.registry import list_userspaces

    return {u.name for u in list_userspaces() if u.state == "ready"}


def prepare(parsed: Parsed, notify: Notify, progress: Notify | None = None) -> RunRequest:
    """The request as it runs here: userspaces made, probes run, the sides that cannot run
    here dropped (or the run refused, in one line). notify: one-line messages the user must
    see; progress: passing status (userspace creation). The RunRequest's `prepared` says
    what was done, for the progress display."""
    progress = progress or notify
    began, wish, settings, ready = time.monotonic(), parsed.wish, parsed.settings, _ready_userspaces()
    if not wish.emulate:
        refuse_emulated_host(parsed.configs)
    configs = parsed.configs
    if configs is None:
        configs = default_configs(notify, progress, parsed.packages, wish.emulate)
        settings = priced(wish, side_names(configs))
    # Checked before any userspace is made: a run that cannot compare makes nothing.
    asked = configs
    configs, lost = usable(configs)
    check_sides(asked, configs, lost, wish.settings.aa)
    configs = [kind_of(c).prepare(c, notify) for c in configs]  # a brought image's architecture, read
    if parsed.configs is not None and not wish.emulate:
        refuse_emulated(configs)
    if wish.settings.aa:  # it measures the first alone: the others were not going to be compared
        lost = {}
    for name, problem in lost.items():
        notify(f"skipping configuration {name}: {problem}")
    if lost:
        settings = replace(settings, prices={n: p for n, p in settings.prices.items() if n not in lost})
    if parsed.configs is not None:
        from shootout.configs.userspaces import made_on_first_use

        configs = made_on_first_use(configs, progress, parsed.packages)
    if wish.settings.aa:
        configs = [configs[0], aa_copy(configs[0])]
    return RunRequest(configs=configs, workloads=parsed.workloads, settings=settings,
                      user_workloads=parsed.user_workloads, params=parsed.params, lost=lost,
                      prepared=_done(asked, ready, time.monotonic() - began))


def _done(configs: list[Config], ready: set[str], seconds: float) -> list[str]:
    """What the preparation did, one phrase each, for the progress display: the compiler ABI
    probes it ran and the userspaces it made (none: nothing to say)."""
    done = []
    if probed := [c.name for c in configs if kind_of(c).host_abi and c.abi is not None and not x86_abi_problem(c.abi)]:
        done.append(f"built and ran a probe program for {', '.join(probed)}")
    if made := sorted(_ready_userspaces() - ready):
        done.append(f"made userspace{'s' if len(made) > 1 else ''} {', '.join(made)}")
    return [*done[:-1], f"{done[-1]} ({seconds:.1f} s)"] if done else []
