"""The `shootout` command."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from typer import Abort

# Typer keeps its own copy of Click: its errors are imported from there
from typer._click.exceptions import NoArgsIsHelpError, UsageError

from shootout.base.errors import ShootoutError
from shootout.base.model import RunSettings
from shootout.cli import listings, stored
from shootout.cli.consoles import console, err_console, say
from shootout.cli.stored import DbOption, WideOption, open_store
from shootout.cli.userspace import app as userspace_app
from shootout.places import config_help

app = typer.Typer(help="Compare machine configurations honestly: paired, interleaved rounds with confidence intervals.",
                  no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False,
                  rich_markup_mode=None)  # click's plain help: wrapped at words, never cut with "…"


# Each command's short_help is its line in `shootout --help`, which would otherwise be cut at 45
# characters.
@app.command(short_help="Run workloads under every configuration in interleaved rounds.")
def run(
    config: Annotated[list[str], typer.Option("--config", "-c", help=config_help())] = [],
    workload: Annotated[list[str], typer.Option("--workload", "-w", help="workload name (repeatable)")] = [],
    suite: Annotated[Optional[str], typer.Option(help="suite name: native, quick, full, or a category")] = None,
    file: Annotated[Optional[Path], typer.Option("--file", "-f", help="shootout.toml with [[config]] and [[workload]] tables; without -w or --suite, its workloads run")] = None,
    experiment: Annotated[Optional[str], typer.Option("--experiment", "-e", help="a named experiment that reproduces a published comparison (see: shootout experiments); with -c, its workloads, sizes and threshold on your sides")] = None,
    size: Annotated[str, typer.Option(metavar="default|writeup", help="with --experiment: 'default', its own sizes (cut to fit its time here), or 'writeup', the write-up's own, with a budget of their own (see: shootout experiments NAME)")] = "default",
    set_: Annotated[list[str], typer.Option("--set", metavar="WORKLOAD.PARAM=VALUE", help="one parameter, over the file's or experiment's [params] (repeatable; a TOML value: 5, 2.5, true, word, \"text\", [1, 2])")] = [],
    budget: Annotated[Optional[str], typer.Option(help="time budget of the measuring, e.g. 10m; checked after the warm-up round (default 4m, or the file's [run] budget; a named experiment's own: see shootout experiments)", show_default=False)] = None,
    partial: Annotated[bool, typer.Option("--partial", help="measure even when the budget cannot reach the first round that can give a verdict (no verdicts then)")] = False,
    precision: Annotated[Optional[str], typer.Option(help="stop a workload once its CI half-width is under this (default: half the threshold)")] = None,
    threshold: Annotated[Optional[str], typer.Option(help="practical threshold δ for faster/slower/same (0.1% or more; default 1%, or the experiment's or file's [run] threshold)")] = None,
    confidence: Annotated[str, typer.Option(help="what every interval shown with a verdict promises, over all rounds and workloads")] = "95%",
    min_rounds: Annotated[Optional[int], typer.Option(help="minimum measured rounds (default 6, the least for a 95% CI, or the file's [run] min_rounds)", show_default=False)] = None,
    max_rounds: Annotated[Optional[int], typer.Option(help="never more rounds than this (default: what the budget pays for at the warm-up's round time, 50 to 400; or the file's [run] max_rounds; a named experiment's own)", show_default=False)] = None,
    seed: Annotated[Optional[int], typer.Option(help="seed of the shuffled order (default: random, stored)")] = None,
    repeats: Annotated[int, typer.Option(help="measure a trial again, up to this often, when other programs used a CPU during it (0: never)")] = RunSettings.repeats,
    aa: Annotated[bool, typer.Option("--aa", help="A/A: the first configuration against itself (noise floor)")] = False,
    resume: Annotated[Optional[str], typer.Option(help="continue an interrupted run (id or 'last')")] = None,
    tune: Annotated[bool, typer.Option("--tune", help="set the performance governor for the run (restored afterwards)")] = False,
    no_boost: Annotated[bool, typer.Option("--no-boost", help="with --tune: also disable turbo/boost")] = False,
    load_wait: Annotated[str, typer.Option(help="wait up to this long for an idle machine", envvar="SHOOTOUT_LOAD_WAIT")] = "60s",
    monitor: Annotated[bool, typer.Option(help="sample clock, temperature, throttling, load and steal during the trials "
                                               "(off: none of their flags, no timeline; interrupted trials are still "
                                               "measured again)")] = True,
    isolate: Annotated[bool, typer.Option("--isolate/--no-isolate", help="as root with 2 or more CPUs: run this machine's trials on all CPUs but one, every other task and IRQ that may move on that one (restored afterwards)")] = True,
    across_boots: Annotated[bool, typer.Option("--across-boots", help="the configurations are kernels (kernel:RELEASE) or whole installs on other roots (boot:ROOT): measure one block of rounds per boot, A B B A …, and say which to boot next")] = False,
    boots: Annotated[int, typer.Option(help="with --across-boots: how many boots (blocks) in all, a multiple of twice the kernels")] = 4,
    next_kernel: Annotated[bool, typer.Option("--next-kernel", help="with --across-boots: boot the next scheduled kernel (or install) once: GRUB's grub-reboot, or a Raspberry Pi's tryboot.txt (then reboot '0 tryboot'); undo with shootout doctor")] = False,
    resume_at_boot: Annotated[bool, typer.Option("--resume-at-boot", help="with --across-boots: install a one-shot systemd unit that measures the next block after the reboot")] = False,
    price: Annotated[list[str], typer.Option("--price", help="CONFIG=PRICE, e.g. ssh:host-a=0.408: stored with the run; show and report add performance per price (repeatable, every configuration; default: the file's [run] prices)")] = [],
    price_unit: Annotated[Optional[str], typer.Option(help="with --price: what a price is, e.g. '$/h' or '$' (default $/h, or the file's [run] price_unit)", show_default=False)] = None,
    parallel: Annotated[bool, typer.Option("--parallel/--sequential", help="measure configurations on different machines (ssh) at the same time, this machine's alone (default), or every trial one after another")] = True,
    counters: Annotated[bool, typer.Option("--counters/--no-counters", envvar="SHOOTOUT_COUNTERS", help="after the rounds, one untimed pass per side and workload that says why: the PMU's counters through perf, or cachegrind's cache model where there is no PMU")] = True,
    cache_model: Annotated[str, typer.Option(help="the caches cachegrind models: host (this CPU's), pi4 (Cortex-A72) or pi5 (Cortex-A76)")] = "host",
    meter: Annotated[Optional[str], typer.Option(help="a command that prints the watts an external meter reads, for each trial's energy where the machine reports none", show_default=False)] = None,
    emulate: Annotated[bool, typer.Option("--emulate", help="run vm: configurations under TCG where KVM is not hardware-backed (function only: results marked emulated, no verdicts)")] = False,
    wide: WideOption = False,
    db: DbOption = None,
) -> None:
    """Run workloads under every configuration in randomized interleaved rounds, then show the verdicts."""
    given = dict(locals())  # the options above, by name: RunOptions has a field for each
    from shootout.conditions.preflight import EarlyWindow

    early = EarlyWindow()  # the load gate's first look, taken while the rest starts up
    from shootout.cli.run import RunOptions, run_command

    try:
        run_command(RunOptions(**given), early)
    except KeyboardInterrupt as exc:  # Typer would end the command with 130 and not a word
        say_interrupted(exc)
        raise typer.Exit(130) from None


app.command("show", short_help="The verdicts of a stored run, or its rows as JSON.")(stored.show_run)
app.command(short_help="The stored runs, newest first.")(stored.runs)


app.command(short_help="The workloads, a line each; workloads NAME for one.")(listings.workloads)
app.command(short_help="The named experiments; experiments NAME for one.")(listings.experiments)


@app.command(short_help="The machine's conditions now: load, clocks, steal, throttling.")
def conditions(
    wait: Annotated[float, typer.Option(help="seconds to wait for an idle machine")] = 5.0,
    as_json: Annotated[bool, typer.Option("--json", help="print the facts and flags as JSON")] = False,
) -> None:
    """The machine's conditions now: load, governor, virtualization, steal, swap, sensors, throttling."""
    from shootout.cli.conditions import conditions_command

    conditions_command(wait, as_json)


@app.command()
def info(config: Annotated[list[str], typer.Option("--config", "-c", help="configuration to describe")] = []) -> None:
    """Facts of this machine and of each configuration."""
    from shootout.cli.conditions import print_preflight
    from shootout.conditions.machinefacts import machine_facts
    from shootout.conditions.preflight import preflight
    from shootout.configs.specs import abi_problem, parse_spec
    from shootout.configs.userspaces import made_now
    from shootout.measure.clock import measure_mhz
    from shootout.places import make_target
    from shootout.system.journal import journal
    from shootout.workloads.debpackages import workload_packages

    print_preflight(preflight(tune=False, journal=None, load_wait_s=0, clock=measure_mhz))
    console.print_json(json.dumps({"machine": machine_facts()}, default=str))
    with journal() as j:
        for spec in config or ["host", "host+m32"]:
            cfg = made_now(parse_spec(spec), packages=workload_packages())  # info makes a missing userspace
            problem = abi_problem(cfg)
            if problem:
                console.print(f"{cfg.name}: not usable here: {escape(problem)}")
                continue
            target = make_target(cfg, j)
            target.open()
            try:
                console.print_json(json.dumps({cfg.name: target.facts(workload_packages(at_creation=False))}, default=str))
            finally:
                target.close()


app.command("export", short_help="Write a run with its raw trials as JSON or CSV.")(stored.export_run)
app.command("import")(stored.import_run)
app.command(short_help="Compare stored runs (unpaired).")(stored.compare)
app.command(short_help="Write a report: charts, HTML or Markdown.")(stored.report)


@app.command(short_help="Tools present or missing; undo what a killed run left.")
def doctor() -> None:
    """Tools present or missing (with the package to install); undo changes left by a killed run."""
    from shootout.boots.switch import undo_next_boot
    from shootout.cli.doctor import tool_report
    from shootout.system.journal import recover

    undone, errors = recover()
    boot_undone, boot_errors = undo_next_boot()  # --next-kernel's switch, --resume-at-boot's unit
    undone, errors = undone + boot_undone, errors + boot_errors
    # soft_wrap: into a pipe a line stays whole (a path is not cut at 80 columns); a terminal wraps it
    for what in undone:
        console.print(f"undid: {what}", soft_wrap=True, markup=False, highlight=False)
    for problem in errors:
        err_console.print(f"[red]could not undo[/]: {escape(problem)}", soft_wrap=True)
    if not undone and not errors:
        console.print("no changes left behind by earlier runs")
    for line in tool_report():
        say(line, hanging=9)  # under the tool's name
    if errors:
        raise typer.Exit(1)


app.add_typer(userspace_app, name="userspace", help="Create, list, update and remove Debian userspaces.")


def _usage_line(exc: UsageError) -> str:
    """A bad option or argument in one line, with where the right ones are listed; Click's own
    report is a usage line, a hint and a box."""
    message = exc.format_message().rstrip(".")
    where = exc.ctx.command_path if exc.ctx is not None else "shootout"
    return f"{message[:1].lower()}{message[1:]} (see: {where} --help)"


def say_interrupted(exc: KeyboardInterrupt) -> None:
    by = f" by {exc}" if str(exc) else ""
    err_console.print(f"interrupted{by}; every finished trial is stored (continue with: shootout run --resume last)")


def main() -> None:
    try:
        # Click's errors come here, to be said in one line. Commands return None: an int is the
        # code of a typer.Exit, which this mode returns instead of exiting with it.
        code = app(prog_name="shootout", standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except NoArgsIsHelpError as exc:  # `shootout` alone: the help is the message (plain help mode)
        typer.echo(exc.format_message())
        sys.exit(exc.exit_code)
    except UsageError as exc:
        err_console.print(f"[red]error:[/] {escape(_usage_line(exc))}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except Abort:
        err_console.print("aborted")
        sys.exit(1)
    except ShootoutError as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt as exc:
        say_interrupted(exc)
        sys.exit(130)
    finally:
        # The process ends here. Without this the collector walks scipy's and sqlalchemy's
        # 100,000 objects again while the interpreter shuts down: 0.3-0.5 s on every command.
        gc.freeze()
