"""`shootout userspace ...`: create, list, update and remove Debian userspaces."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

app = typer.Typer(help="Create, list, update and remove Debian userspaces (chroot targets).",
                  no_args_is_help=True, rich_markup_mode=None)  # plain help, as the main app's
console = Console()
err_console = Console(stderr=True)


@contextmanager
def _progress(title: str) -> Iterator[Callable[[str], None]]:
    """A spinner line showing mmdebstrap's latest step and the time so far."""
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=err_console, transient=True) as bar:
        task = bar.add_task(title)

        def update(message: str) -> None:
            bar.update(task, description=f"{title}: {message[:90]}")

        yield update


@app.command(short_help="Build a userspace with mmdebstrap, with the workloads' packages.")
def create(
    name: Annotated[str, typer.Argument(help="name of the new userspace, e.g. debian-bookworm-i386")],
    arch: Annotated[str, typer.Option("--arch", "-a", help="Debian architecture: amd64, i386, arm64, armhf, ...")],
    release: Annotated[str | None, typer.Option(help="Debian release (default: the host's, else bookworm)")] = None,
    mirror: Annotated[str | None, typer.Option(help="Debian mirror URL")] = None,
    packages: Annotated[str | None, typer.Option(
        help="comma-separated packages to install instead of the workload set (what a workload lacks is installed on first use)")] = None,
) -> None:
    """Build a userspace with mmdebstrap (minbase) and install the workloads' packages in it."""
    from shootout.userspace.create import DEFAULT_MIRROR, create_userspace
    from shootout.workloads.debpackages import workload_packages

    wanted = tuple(p.strip() for p in packages.split(",") if p.strip()) if packages else None
    started = time.monotonic()
    with _progress(f"creating {name}") as progress:
        made = create_userspace(name, arch, release, mirror=mirror or DEFAULT_MIRROR, packages=workload_packages() if wanted is None else wanted,
                                progress=progress)
    console.print(f"created {made.name} ({made.release} {made.arch}, {len(made.packages)} packages) "
                  f"in {time.monotonic() - started:.0f} s: {made.root}")


@app.command("list", short_help="Userspaces on this machine, half-made ones marked.")
def list_() -> None:
    """Userspaces on this machine: ready ones, and half-made ones marked incomplete."""
    from shootout.userspace.arches import is_foreign
    from shootout.userspace.registry import list_userspaces

    found = list_userspaces()
    if not found:
        console.print("no userspaces yet (create one: shootout userspace create NAME --arch ARCH)")
        return
    table = Table()
    table.add_column("name", no_wrap=True)
    for column in ("state", "release", "arch", "packages"):
        table.add_column(column)
    table.add_column("created", no_wrap=True)
    for u in found:
        created = u.meta.get("created_at")
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(created)) if created else "-"
        arch = u.arch + (" (emulated)" if u.arch in _known() and is_foreign(u.arch) else "")
        table.add_row(u.name, u.state, u.release, arch, str(len(u.packages)) if u.packages else "-", when)
    console.print(table)


def _known() -> set[str]:
    from shootout.userspace.arches import ARCHES

    return set(ARCHES)


@app.command()
def remove(name: Annotated[str, typer.Argument(help="userspace to delete (ready or incomplete)")]) -> None:
    """Delete a userspace, including a half-made one."""
    from shootout.userspace.registry import remove_userspace

    for path in remove_userspace(name):
        console.print(f"removed {path}")


@app.command(short_help="apt-get upgrade inside a userspace; record the new versions.")
def update(name: Annotated[str, typer.Argument(help="userspace to upgrade")]) -> None:
    """apt-get update and upgrade inside the userspace, then record the new package versions."""
    from shootout.places.chroot import ChrootTarget
    from shootout.userspace.update import update_userspace

    with _progress(f"updating {name}") as progress:
        changed = update_userspace(name, ChrootTarget, progress=progress)
    if not changed:
        console.print(f"{name} is up to date")
    for pkg, (old, new) in changed.items():
        console.print(f"{pkg}: {old or '-'} -> {new or '-'}")
