import pytest

from shootout.base.errors import UsageError
from shootout.base.model import Config, aa_copy
from shootout.configs.specs import abi_problem, load_file, parse_spec, resolve


def test_host_specs():
    assert parse_spec("host") == Config(name="host", target="host", label="host", abi=None)
    assert parse_spec("host+m32").abi == "m32"
    assert parse_spec("host+mx32").abi == "mx32"


@pytest.mark.parametrize("bad", ["hots", "host+m16", "debian:bookworm", ""])
def test_unknown_spec_is_a_usage_error(bad):
    with pytest.raises(UsageError, match="unknown configuration"):
        parse_spec(bad)


def test_toml_configs_and_workloads(tmp_path):
    f = tmp_path / "shootout.toml"
    f.write_text('''
[run]
configs = ["o2", "o3"]

[[config]]
name = "o2"
cflags = "-O2 -fno-inline"

[[config]]
name = "o3"
spec = "host+m32"
cflags = ["-O3"]
env = { MALLOC_ARENA_MAX = "1" }
label = "-O3, 32-bit"

[[workload]]
name = "sleep"
command = "sleep 0.1"
''')
    s = load_file(f)
    assert s.configs["o2"].cflags == ("-O2", "-fno-inline")
    o3 = s.configs["o3"]
    assert (o3.abi, o3.cflags, o3.env, o3.display) == ("m32", ("-O3",), (("MALLOC_ARENA_MAX", "1"),), "-O3, 32-bit")
    assert s.workloads["sleep"]["command"] == "sleep 0.1"
    assert [c.name for c in resolve(["o3", "host"], s.configs)] == ["o3", "host"]


def test_malformed_toml_names_file_and_line(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('[[config]]\nname = "x"\ncflags = [\n')
    with pytest.raises(UsageError) as err:
        load_file(f)
    assert "bad.toml" in str(err.value) and "line" in str(err.value)


def test_unknown_keys_and_sections_are_rejected(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('[[config]]\nname = "x"\ncflag = "-O3"\n')
    with pytest.raises(UsageError, match="unknown key"):
        load_file(f)
    f.write_text('[[configs]]\nname = "x"\n')
    with pytest.raises(UsageError, match="unknown section"):
        load_file(f)


def test_a_workload_with_an_unknown_unit_is_refused_when_the_file_is_read(tmp_path):
    # even one this run does not select: the file is wrong, whatever -w says
    f = tmp_path / "s.toml"
    f.write_text('[[workload]]\nname = "load"\ncommand = "x"\nregex = "([0-9]+)"\nunit = "pct"\ndirection = "higher"\n')
    with pytest.raises(UsageError, match="s.toml: workload load: unknown unit 'pct'"):
        load_file(f)


def test_same_config_twice_points_to_aa():
    with pytest.raises(UsageError) as err:
        resolve(["host", "host"], {})
    assert "--aa" in err.value.hint


def test_aa_copy_is_a_distinct_configuration():
    c = aa_copy(parse_spec("host"))
    assert c.name == "host~again" and c.target == "host"


def test_x32_unusable_on_this_kernel_with_a_reason():
    # This machine's kernel has no x32 ABI (and may lack the x32 libc): either way a reason.
    problem = abi_problem(parse_spec("host+mx32"))
    assert problem and ("x32" in problem or "gcc-multilib" in problem)


def test_native_abi_always_usable():
    assert abi_problem(parse_spec("host")) is None
