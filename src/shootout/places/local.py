"""File operations of a target whose files are on this machine's filesystem (host, chroot).

The same operations as Target's, done directly instead of through commands; a target says
where a path inside it is on the host with host_path(). Only the target's own class calls
host_path(): workloads see paths inside the target.
"""

from __future__ import annotations

import os
import shutil
from abc import abstractmethod
from pathlib import Path

from shootout.base.errors import TargetError
from shootout.places.target import Target


class LocalFiles(Target):
    @abstractmethod
    def host_path(self, inside: str) -> Path:
        """Where the path `inside` (as seen inside the target) is on this machine."""

    def _fail(self, what: str, exc: OSError) -> TargetError:
        return TargetError(f"cannot {what} in {self.config.display}: {exc.strerror or exc}",
                           "check the free space and permissions inside the target")

    def put(self, source: bytes | Path, dest: str) -> str:
        path = self.host_path(dest)
        part = path.with_name(path.name + ".part")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(source, bytes):
                part.write_bytes(source)
            else:
                shutil.copyfile(source, part)
            os.replace(part, path)  # atomic: a half-written file is never used
        except OSError as exc:
            part.unlink(missing_ok=True)
            raise self._fail(f"write {dest}", exc) from None
        return dest

    def put_tree(self, source: Path, dest: str) -> str:
        path = self.host_path(dest)
        part = path.with_name(path.name + ".part")
        try:
            shutil.rmtree(part, ignore_errors=True)
            shutil.copytree(source, part, symlinks=True)
            shutil.rmtree(path, ignore_errors=True)
            os.replace(part, path)
        except OSError as exc:
            shutil.rmtree(part, ignore_errors=True)
            raise self._fail(f"write {dest}", exc) from None
        return dest

    def read(self, path: str, limit: int | None = None, offset: int = 0) -> bytes:
        try:
            with open(self.host_path(path), "rb") as fh:
                fh.seek(offset)
                return fh.read() if limit is None else fh.read(limit)
        except OSError as exc:
            raise self._fail(f"read {path}", exc) from None

    def exists(self, path: str) -> bool:
        return self.host_path(path).exists()

    def mkdir(self, path: str) -> str:
        try:
            self.host_path(path).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._fail(f"make directory {path}", exc) from None
        return path

    def remove(self, path: str) -> None:
        host = self.host_path(path)
        if host.is_dir() and not host.is_symlink():
            shutil.rmtree(host, ignore_errors=True)
        else:
            host.unlink(missing_ok=True)
