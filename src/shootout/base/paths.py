"""Where shootout keeps its database, caches, userspaces and journal."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def data_dir() -> Path:
    """SHOOTOUT_HOME overrides the per-user data directory (tests use it)."""
    root = os.environ.get("SHOOTOUT_HOME")
    path = Path(root) if root else Path(platformdirs.user_data_dir("shootout"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_subdir(name: str) -> Path:
    """A directory of the data directory (cache, journal, userspaces), made if missing."""
    path = data_dir() / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def kept_log(name: str, text: bytes) -> Path | None:
    """A failure's log, kept as logs/NAME in the data directory, where it outlives the work that
    wrote it (a userspace being made, a VM's run directory); None when it cannot be written."""
    try:
        path = data_subdir("logs") / name
        path.write_bytes(text)
    except OSError:
        return None
    return path


def cache_dir() -> Path:
    return data_subdir("cache")


def shared_cache_dir() -> Path:
    """Downloads kept for every data directory of this user (like apt's archive cache), so a
    fresh SHOOTOUT_HOME does not fetch again what an earlier one fetched."""
    return Path(platformdirs.user_cache_dir("shootout"))


def default_db_url() -> str:
    return f"sqlite:///{data_dir() / 'results.db'}"
