"""What a browser trial needs, made on the host and put into the target.

  driver   puppeteer-core (package-lock.json) plus driver.mjs: runs inside the target
  bundles  the to-do apps built with esbuild from the pinned frameworks (apps/), on the host
  site     the bundles with the harness, the kernels and the small HTML pages around them
  heavy    the generated heavy page (pages.heavy_page), a cached input like the others
Everything is keyed by content hashes and built once; the hashes go into the facts so
every side of a comparison can be shown to have loaded the same bytes. Files reach the
target only through its put_tree() and put() (and inputs.place for the heavy page).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from shootout.base.errors import ToolMissing, WorkloadError
from shootout.base.paths import cache_dir
from shootout.execution.tools import find_tool
from shootout.workloads import inputs
from shootout.workloads.browser.pages import (
    FRAMEWORKS,
    engine_page,
    heavy_page,
    todo_page,
)
from shootout.workloads.npm import locked_install

HERE = Path(__file__).resolve().parent
DRIVER, APPS, PAGES = HERE / "driver", HERE / "apps", HERE / "pages"


def tree_sha256(root: Path) -> str:
    """One digest over every file's relative path and bytes."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _atomic_dir(final: Path, make) -> Path:
    """Build a directory with make(tmp) and rename it into place; a half-made one is never used."""
    if final.exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        make(tmp)
        try:
            tmp.rename(final)
        except OSError:
            if not final.exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def bundles() -> Path:
    """The five app bundles (app-<framework>.js), built once per content of apps/."""
    modules = locked_install(APPS, "the to-do apps' frameworks")
    final = cache_dir() / "browser" / f"bundles-{tree_sha256(APPS)[:12]}"

    def build(out: Path) -> None:
        node = find_tool("node")
        if node is None:
            raise ToolMissing("node", "nodejs", where="the host (it builds the to-do apps once)")
        proc = subprocess.run([node, str(APPS / "build.mjs"), str(modules), str(APPS / "src"), str(out)], check=False,
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise WorkloadError(f"building the to-do apps failed: {last[:200]}",
                                f"run by hand: node {APPS / 'build.mjs'} {modules} {APPS / 'src'} /tmp/out")
        missing = [f for f in FRAMEWORKS if not (out / f"app-{f}.js").is_file()]
        if missing:
            raise WorkloadError(f"the app build made no bundle for {', '.join(missing)}", "see apps/build.mjs")

    return _atomic_dir(final, build)


def site() -> Path:
    """The directory of pages the driver opens: to-do apps with their harness, and the kernels."""
    built = bundles()
    key = hashlib.sha256((tree_sha256(built) + tree_sha256(PAGES)).encode()).hexdigest()[:12]

    def assemble(out: Path) -> None:
        for path in [*built.glob("app-*.js"), *PAGES.iterdir()]:
            if path.is_file():
                shutil.copyfile(path, out / path.name)
        for framework in FRAMEWORKS:
            (out / f"todo-{framework}.html").write_text(todo_page(framework))
        (out / "engine.html").write_text(engine_page())

    return _atomic_dir(cache_dir() / "browser" / f"site-{key}", assemble)


def driver() -> Path:
    """puppeteer-core's node_modules (the pinned lock), installed once on the host."""
    return locked_install(DRIVER, "the browser driver (puppeteer-core)")


def heavy(sections: int) -> inputs.Input:
    return inputs.cached("heavy", "html", {"sections": sections, "v": 1},
                         lambda p: p.write_text(heavy_page(sections)))
