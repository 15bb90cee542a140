"""The size of the code that ran: a binary's segments and its libraries', read through a place."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from shootout.base.model import Config
from shootout.counters.codesize import code_size, segment_sizes
from shootout.places.host import HostTarget


def test_ls_maps_its_own_code_and_libcs() -> None:
    binary = Path(shutil.which("ls") or "/bin/ls").resolve()
    own_text, own_data = segment_sizes(binary.read_bytes())
    libc = Path("/lib/x86_64-linux-gnu/libc.so.6")
    libc_text, _ = segment_sizes(libc.read_bytes()) if libc.exists() else (0, 0)
    found = code_size(HostTarget(Config(name="host")), "ls")
    assert 0 < own_text < found["text_bytes"] and 0 < own_data < found["data_bytes"]
    assert libc_text > 1_000_000 and found["text_bytes"] >= own_text + libc_text
    # what ldd lists, its vdso aside (the kernel's, no file)
    ldd = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
    assert found["libraries"] == len([l for l in ldd.splitlines() if "vdso" not in l])


def test_segments_are_read_from_the_head_of_the_file() -> None:
    libc = Path("/lib/x86_64-linux-gnu/libc.so.6").read_bytes()
    assert segment_sizes(libc[:65536]) == segment_sizes(libc)
    readelf = subprocess.run(["readelf", "-lW", "/lib/x86_64-linux-gnu/libc.so.6"], capture_output=True,
                             text=True, check=True).stdout
    loads = [l.split() for l in readelf.splitlines() if l.strip().startswith("LOAD")]
    text = sum(int(f[5], 16) for f in loads if "E" in "".join(f[6:-1]))
    data = sum(int(f[5], 16) for f in loads if "W" in "".join(f[6:-1]))
    assert segment_sizes(libc) == (text, data) and text > 0 and data > 0
    assert segment_sizes(b"#!/bin/sh\n") == (0, 0)


def test_a_script_counts_its_interpreters_code(tmp_path: Path) -> None:
    script = tmp_path / "hello"
    script.write_text("#!/bin/sh\necho hello\n")
    host = HostTarget(Config(name="host"))
    assert code_size(host, str(script)) == code_size(host, "/bin/sh") != {}
    assert code_size(host, "no-such-tool-here") == {}


def test_a_library_of_another_abi_is_passed_over(tmp_path: Path) -> None:
    """A 32-bit binary's libc is /lib32's, not /lib/x86_64-linux-gnu's."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return
    source = tmp_path / "hello.c"
    source.write_text("int main(void) { return 0; }\n")
    made = subprocess.run([gcc, "-m32", "-o", str(tmp_path / "hello32"), str(source)], check=False, capture_output=True)
    assert made.returncode == 0, "gcc-multilib is needed: " + made.stderr.decode()
    host = HostTarget(Config(name="host"))
    found = code_size(host, str(tmp_path / "hello32"))
    lib32 = segment_sizes(Path("/lib32/libc.so.6").read_bytes())[0]
    assert found["libraries"] == 2 and found["text_bytes"] > lib32  # libc and ld-linux.so.2
    assert not re.search("x86_64", str(found))
