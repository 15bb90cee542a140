"""build: make -jN of the pinned Lua sources and of a directory the user names."""

from __future__ import annotations

import pytest

from shootout.base.model import Config
from shootout.places.host import HostTarget
from shootout.workloads.compile import TARBALL_SHA256, Build


@pytest.mark.parametrize("abi", [None, "m32"], ids=["native", "m32"])
def test_build_pinned_lua(cached_home, run_workload, abi):
    target = HostTarget(Config(name="host", abi=abi))
    try:
        w = Build()
        prepared, _, values, result = run_workload(target, w, w.quick)
        assert prepared.facts["input_sha256"] == TARBALL_SHA256
        assert ("-m32" in prepared.facts["cc"]) == (abi == "m32")
        assert 1 < values["make_s"] < result.wall_s
        assert "built Lua 5.4" in result.stdout
    finally:
        target.close()


def test_build_user_directory_with_configure(cached_home, run_workload, tmp_path):
    src = tmp_path / "proj"
    src.mkdir()
    for i in range(4):
        (src / f"f{i}.c").write_text(f"int f{i}(int x) {{ return x * {i + 2}; }}\n")
    (src / "main.c").write_text("int f0(int);\nint main(void) { return f0(0); }\n")
    # configure writes the Makefile, as autoconf projects do; it must run before timing
    (src / "configure").write_text(
        "#!/bin/sh\nprintf 'prog: main.o f0.o f1.o f2.o f3.o\\n\\t$(CC) -o $@ $^\\n' > Makefile\n")
    (src / "configure").chmod(0o755)
    target = HostTarget(Config(name="host"))
    try:
        w = Build()
        prepared, _, values, _ = run_workload(target, w, {"source_dir": str(src)})
        assert prepared.facts["source"] == str(src)
        assert target.exists(prepared.files["tree"] + "/Makefile")  # configure ran, inside the target
        assert values["make_s"] > 0
    finally:
        target.close()
