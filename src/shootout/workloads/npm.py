"""npm packages installed once on the host into the cache, at pinned versions.

Two ways to pin: a committed package-lock.json (`npm ci`, every transitive package fixed
with its integrity hash), or a manifest written here (js: top-level versions plus
overrides). Either way the install happens once per manifest, into a directory named by
its hash, and becomes visible only when complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from shootout.base.errors import ToolMissing, WorkloadError
from shootout.base.paths import cache_dir
from shootout.execution.tools import find_tool


def npm_install(root: Path, command: str, what: str) -> None:
    """Run `npm install` or `npm ci` in root (which holds package.json); one-line errors."""
    npm = find_tool("npm")
    if npm is None:
        raise ToolMissing("npm", "npm", where=f"the host (it installs {what} once)")
    proc = subprocess.run([npm, command, "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
                          cwd=root, capture_output=True, text=True, timeout=1200)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise WorkloadError(f"npm {command} of {what} failed: {last[:200]}", "check that the npm registry is reachable")


def check_versions(root: Path, wanted: dict[str, str], what: str) -> None:
    """Every top-level package at exactly its pinned version."""
    for name, version in wanted.items():
        got = json.loads((root / "node_modules" / name / "package.json").read_text())["version"]
        if got != version:
            raise WorkloadError(f"npm installed {name} {got}, not the pinned {version} ({what})", "clear the cache")


def locked_install(project: Path, what: str) -> Path:
    """`npm ci` of project's package.json and package-lock.json into the cache; the install root."""
    manifest = (project / "package.json").read_bytes()
    lock = (project / "package-lock.json").read_bytes()
    key = hashlib.sha256(manifest + b"\0" + lock).hexdigest()[:12]
    root = cache_dir() / "npm" / f"{project.name}-{key}"
    if (root / ".complete").exists():
        return root
    tmp = root.with_name(f".{root.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        (tmp / "package.json").write_bytes(manifest)
        (tmp / "package-lock.json").write_bytes(lock)
        npm_install(tmp, "ci", what)
        check_versions(tmp, json.loads(manifest)["dependencies"], what)
        (tmp / ".complete").write_text("ok")
        try:
            tmp.rename(root)  # atomic: another process may have finished first
        except OSError:
            if not (root / ".complete").exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return root
