"""A named experiment at the write-up's own sizes (--size writeup), on the user's own sides (-c),
written out as a run file (experiments show NAME --toml), and one parameter set from the
command line (--set WORKLOAD.PARAM=VALUE)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from shootout.base.errors import UsageError
from shootout.base.model import RunSettings
from shootout.configs.specs import load_text
from shootout.configs.tomltext import dumps
from shootout.experiments import EXPERIMENTS, experiment
from shootout.experiments.limits import how_long, run_limits, span
from shootout.experiments.runfile import run_file
from shootout.experiments.sizing import DEFAULT_SIZE, SIZES, WRITEUP_SIZE
from shootout.request.overrides import check_params, parse_sets
from shootout.request.request import Wish, build_request, make_workload
from shootout.request.settings import Asked, load_tables, resolve_settings
from shootout.userspace.arches import headline_arches, host_arch, kernel_arch


def quiet(_: str) -> None:
    pass


# --size writeup

@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_runs_at_the_write_up_s_sizes_within_a_limit_of_their_own(name):
    named = experiment(name)
    at = named.settings(WRITEUP_SIZE)
    assert at.run == named.settings().run and set(at.configs) == set(named.settings().configs)
    workloads = [make_workload(w, at.workloads) for w in at.run["workloads"]]
    check_params(workloads, at.params, name)  # every write-up size names a parameter its workload has
    own = named.plan(size=WRITEUP_SIZE)  # DoesNotFit when the write-up's rounds do not fit its limit
    sizing = named.sizing_at(WRITEUP_SIZE)
    assert own.first_verdict_s <= sizing.limit_s and sizing.prepare_s + own.budget_s <= sizing.limit_s
    if named.cuts:  # it cuts the write-up's size: it says which, and times it apart
        assert named.writeup_note and named.sizing.note and named.writeup_sizing is not None
        assert named.writeup_sizing.measured and named.writeup_sizing.round_s > named.sizing.round_s
        assert at.params != named.settings().params or at.configs != named.settings().configs
    else:
        assert at.params == named.settings().params and named.writeup_sizing is None


def test_rpi64_at_the_write_up_s_sizes_encodes_its_23_5_minute_track():
    named = experiment("rpi64")
    params = named.settings(WRITEUP_SIZE).params
    assert params["lame"]["minutes"] == params["flac"]["minutes"] == 23.5
    assert params["sha1-sparse"] == {"size": 2_000_000_000} and "sha1-sparse" not in named.settings().params
    assert named.settings().params["lame"]["minutes"] == 3  # the default stays the cut size
    # its own budget at that size: the limit that fits rounds of 126 s, not the cut size's 8 minutes
    assert run_limits("rpi64", None, None, size=WRITEUP_SIZE) == (2040, 15)
    assert run_limits("rpi64", None, None) == (420, 50)  # its first verdict fits at 50 looks


def test_write_up_sizes_merge_into_the_experiment_s_tables_key_by_key():
    pi3desk = experiment("pi3desk").settings(WRITEUP_SIZE)
    for config in pi3desk.configs.values():  # dd's two 1 GiB files need more than the cut size's 1G
        assert config.parts["scratch"]["size"] == 3 << 30 and config.parts["throttle"]["bps"] == 30e6
    assert pi3desk.params["dd-write"] == {"size_mib": 1024}
    swap = experiment("pi3desk-swap").settings(WRITEUP_SIZE)
    assert {c.parts["memory"]["limit"] for c in swap.configs.values()} == {1 << 30}
    assert swap.params["tabs"]["switches"] == 100 and swap.params["tabs"]["max_seconds"] == 120
    assert experiment("cloud-openssl").settings(WRITEUP_SIZE).params["openssl-speed"]["sizes"] == [
        16, 64, 256, 1024, 8192, 16384]


def test_size_writeup_needs_an_experiment_and_a_size_is_one_of_two():
    with pytest.raises(UsageError, match="--size writeup needs --experiment") as caught:
        load_tables(None, None, WRITEUP_SIZE)
    assert "--set" in caught.value.hint
    with pytest.raises(UsageError, match="'huge' is not a size"):
        load_tables("rpi64", None, "huge")
    with pytest.raises(UsageError, match="needs --experiment"):
        resolve_settings(Asked(size=WRITEUP_SIZE))
    assert resolve_settings(Asked(experiment="rpi64", size=WRITEUP_SIZE)).tables.params["lame"]["minutes"] == 23.5


def test_the_listing_says_how_long_at_each_size_and_which_are_estimates():
    assert span(experiment("rpi64")) == "6-8m" and span(experiment("rpi64"), WRITEUP_SIZE) == "27-35m"
    assert span(experiment("pi3desk"), WRITEUP_SIZE).endswith("h*")  # estimated from the link's rate
    lines = how_long(experiment("rpi64"), None)
    (writeup,) = [line for line in lines if line.startswith("at the write-up's sizes")]
    assert "23.5-minute" in writeup and "rounds of 126 s measured" in writeup and "a budget of 34m" in writeup
    assert "estimated: rounds of 620 s" in how_long(experiment("pi3desk"), None)[-1]
    assert any("nothing is cut" in line for line in how_long(experiment("vpn"), None))


# the user's own sides

def test_rpi64_runs_its_workloads_and_sizes_on_the_sides_the_user_names():
    sides = ["debian:bookworm:amd64", "debian:bookworm:i386"]
    for size in SIZES:
        parsed = build_request(Wish(configs=sides, experiment="rpi64", size=size), quiet)
        assert [c.name for c in parsed.configs] == sides
        assert [w.spec.name for w in parsed.workloads] == ["intmix", "sha1-sparse", "membw", "maxalloc", "lame", "flac"]
        assert parsed.params["lame"]["minutes"] == (23.5 if size == WRITEUP_SIZE else 3)


@pytest.mark.parametrize(("name", "lost"), [
    ("rpi-network", "network ({native}, {companion})"),  # this machine's pair: arm64, armhf on a Pi
    ("pi3desk-swap", "memory (none, disk, zswap, zram); swap (none, disk, zswap, zram)"),
    ("pi3desk", "scratch (ext4, btrfs-zstd, btrfs-zlib, btrfs-zlib-dirty); settings (btrfs-zlib-dirty)"),
    ("drop-ladder", "network ("),
])
def test_sides_that_would_lose_the_experiment_s_parts_are_refused_naming_them(name, lost):
    with pytest.raises(UsageError) as caught:
        build_request(Wish(configs=["debian:bookworm:amd64", "debian:bookworm:i386"], experiment=name), quiet)
    message = caught.value.message
    assert message.startswith(f"experiment {name}'s own sides carry what debian:bookworm:amd64, "
                              "debian:bookworm:i386 would lose: ")
    native, companion = pair()
    assert lost.format(native=native, companion=companion) in message and "\n" not in message
    assert f"experiments show {name} --toml" in caught.value.hint


def pair() -> tuple[str, str]:
    """This machine's 64-bit architecture and its companion, as the experiments name their sides."""
    found = headline_arches(host_arch(), kernel_arch())
    assert found is not None
    return found


def test_the_experiment_s_own_sides_by_name_keep_their_parts():
    native, companion = pair()
    parsed = build_request(Wish(configs=[f"{native}-sd", f"{companion}-sd"], experiment="rpi-iozone"), quiet)
    assert [c.parts["throttle"]["bps"] for c in parsed.configs] == [20e6, 20e6]
    with pytest.raises(UsageError, match="would lose: scratch"):  # one own side, one of the user's
        build_request(Wish(configs=[f"{native}-sd", "debian:bookworm:i386"], experiment="rpi-iozone"), quiet)


def test_the_paragraph_beside_the_write_up_reads_user_named_sides_at_either_size(analysis):
    # the fixture's sides are what -c debian:bookworm:amd64 -c debian:bookworm:i386 names
    named = experiment("rpi64")
    lines = named.explain(analysis)
    assert not any("write-up's sizes" in line for line in lines)
    from shootout.workloads.media import Lame

    run = dataclasses.replace(analysis.runs[0], settings=RunSettings(size=WRITEUP_SIZE))
    with_lame = (*analysis.workloads, Lame.spec)  # the fixture's five workloads have no lame of their own
    at = named.explain(dataclasses.replace(analysis, runs=(run,), workloads=with_lame))
    assert at[:len(lines)] == lines
    assert at[len(lines)] == ("at the write-up's sizes (--size writeup): SHA-1 of the write-up's 2 GB; "
                             "lame and flac encode its 23.5-minute track")
    assert "lame" not in {w.name for w in analysis.workloads}
    assert "sha1-sparse" in {w.name for w in analysis.workloads}  # at 2 GB: the line is said without lame
    assert any("write-up's sizes" in line for line in named.explain(dataclasses.replace(analysis, runs=(run,))))
    kept = tuple(w for w in analysis.workloads if w.name != "sha1-sparse")
    without = dataclasses.replace(analysis, runs=(run,), workloads=kept)
    assert not any("write-up's sizes" in line for line in named.explain(without))  # -w left out sha1-sparse, lame, flac


# shootout experiments show NAME --toml

@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_the_printed_run_file_runs_what_the_experiment_runs(name, size, tmp_path: Path):
    named = experiment(name)
    text = run_file(named, size)
    assert text.startswith(f"# shootout experiment {name}") and named.reproduces[:20] in text
    assert "$native" not in text and "$companion" not in text  # this machine's sides in their place
    printed = load_text(text, "printed")
    own = named.settings(size)
    assert printed.configs == own.configs and printed.workloads == own.workloads and printed.params == own.params
    assert {k: v for k, v in printed.run.items() if k in own.run} == own.run
    (tmp_path / "run.toml").write_text(text)
    from_file = resolve_settings(Asked(file=tmp_path / "run.toml"))
    from_experiment = resolve_settings(Asked(experiment=name, size=size))
    for setting in ("threshold", "precision", "confidence", "budget_s", "min_rounds", "max_rounds"):
        assert getattr(from_file, setting) == getattr(from_experiment, setting), setting
    if named.machines:
        return  # its sides are the machines the user names
    sides = ["debian:bookworm:amd64", "debian:bookworm:i386"] if not own.run.get("configs") and not own.configs else []
    by_file = build_request(Wish(configs=sides, file=tmp_path / "run.toml"), quiet)
    by_name = build_request(Wish(configs=sides, experiment=name, size=size), quiet)
    assert by_file.configs == by_name.configs and by_file.params == by_name.params
    assert [w.spec for w in by_file.workloads] == [w.spec for w in by_name.workloads]


def test_the_run_file_names_the_sides_of_this_machine(monkeypatch: pytest.MonkeyPatch):
    from shootout.experiments import writeup

    monkeypatch.setattr(writeup, "host_arch", lambda: "arm64")
    monkeypatch.setattr(writeup, "kernel_arch", lambda: "arm64")
    printed = load_text(run_file(experiment("rpi-network")), "printed")
    assert printed.run["configs"] == ["arm64", "armhf"]
    assert printed.configs["armhf"].userspace == "debian-bookworm-armhf"


def test_toml_text_quotes_what_a_bare_key_cannot_hold():
    text = dumps({"run": {"workloads": ["a"]}, "config": [{"name": "x", "sysctl": {"vm.dirty_ratio": "50"}}],
                  "params": {"sha1-sparse": {"size": 2, "on": True, "rate": 0.5, "list": ["q\"uote"], "t": {}}}},
                 ["a comment"])
    assert '"vm.dirty_ratio" = "50"' in text and "[params.sha1-sparse]" in text and text.startswith("# a comment\n")
    import tomllib

    assert tomllib.loads(text)["params"]["sha1-sparse"] == {"size": 2, "on": True, "rate": 0.5, "list": ['q"uote'],
                                                             "t": {}}
    with pytest.raises(ValueError, match="not a run file's section"):
        dumps({"other": {}})


# --set WORKLOAD.PARAM=VALUE

def test_set_values_are_typed_as_toml_types_them():
    assert parse_sets(["lame.minutes=23.5", "intmix.iterations=5", "membw.mlock=false", "vpn.tunnel=openvpn",
                       'vpn.affinity="0,1"', "iozone.records=['4k']"]) == {
        "lame": {"minutes": 23.5}, "intmix": {"iterations": 5}, "membw": {"mlock": False},
        "vpn": {"tunnel": "openvpn", "affinity": "0,1"}, "iozone": {"records": ["4k"]}}
    assert parse_sets(["lame.minutes=1", "lame.minutes=2"]) == {"lame": {"minutes": 2}}  # the last wins
    for bad in ("lame", "lame.minutes", "=3", "lame.minutes=[1,"):
        with pytest.raises(UsageError, match="--set"):
            parse_sets([bad])


def test_set_wins_over_the_experiment_s_params_key_by_key():
    parsed = build_request(Wish(configs=["host"], experiment="rpi64", params=parse_sets(["lame.minutes=10"])), quiet)
    assert parsed.params["lame"] == {"minutes": 10} and parsed.params["flac"] == {"minutes": 3}
    parsed = build_request(Wish(experiment="rpi-network", params=parse_sets(["tcp-veth.seconds=4"])), quiet)
    assert parsed.params["tcp-veth"] == {"seconds": 4, "parallel": 0, "affinity": "auto"}  # the rest kept
    renamed = build_request(Wish(experiment="rpi-network", params=parse_sets(["vpn-openvpn.seconds=4"])), quiet)
    assert renamed.params["vpn-openvpn"] == {"tunnel": "openvpn", "seconds": 4, "affinity": "auto"}
    with pytest.raises(UsageError, match="vpn-openvpn's parameters: affinity, seconds, timeout_s, tunnel"):
        build_request(Wish(experiment="rpi-network", params=parse_sets(["vpn-openvpn.tunel=x"])), quiet)


def test_set_over_a_file_and_over_the_workload_s_default(tmp_path: Path):
    toml = tmp_path / "s.toml"
    toml.write_text("[run]\nworkloads = ['intmix', 'ptrtree']\n[params.intmix]\niterations = 12345\n")
    parsed = build_request(Wish(configs=["host"], file=toml, params=parse_sets(["ptrtree.nodes=1000"])), quiet)
    assert parsed.params == {"intmix": {"iterations": 12345}, "ptrtree": {"nodes": 1000}}


@pytest.mark.parametrize(("given", "said", "hint"), [
    ("nosuch.x=1", "--set: 'nosuch' is not a workload of this run", "this run's workloads: intmix"),
    ("intmix.nosuch=1", "--set: intmix has no parameter 'nosuch'", "intmix's parameters: iterations, timeout_s"),
    ("intmix.iterations=many", "--set: intmix.iterations = 'many' is not a number", "iterations = 1000000"),
    ("intmix.iterations=true", "is not a number", "its default"),
    ("membw.mlock=1", "membw.mlock = 1 is not true or false", "its default"),
])
def test_a_bad_set_is_one_line_naming_what_is_allowed(given, said, hint):
    workloads = ["membw"] if given.startswith("membw") else ["intmix"]
    with pytest.raises(UsageError) as caught:
        build_request(Wish(configs=["host"], workloads=workloads, params=parse_sets([given])), quiet)
    assert said in caught.value.message and hint in caught.value.hint


def test_the_trial_timeout_is_every_workloads_parameter(tmp_path: Path):
    toml = tmp_path / "t.toml"
    toml.write_text("[run]\nworkloads = ['intmix']\n[params.intmix]\ntimeout_s = 120\n")
    assert build_request(Wish(configs=["host"], file=toml), quiet).params == {"intmix": {"timeout_s": 120}}
    with pytest.raises(UsageError, match="intmix.timeout_s = 'long' is not a number"):
        build_request(Wish(configs=["host"], workloads=["intmix"], params=parse_sets(["intmix.timeout_s=long"])), quiet)


def test_a_file_s_params_naming_no_parameter_are_refused_too(tmp_path: Path):
    toml = tmp_path / "s.toml"
    toml.write_text("[run]\nworkloads = ['intmix']\n[params.intmix]\niteration = 5\n")
    with pytest.raises(UsageError, match=f"{toml}: intmix has no parameter 'iteration'"):
        build_request(Wish(configs=["host"], file=toml), quiet)


def test_show_says_what_was_set_on_the_command_line(analysis):
    import io

    from rich.console import Console

    from shootout.report.terminal import show

    run = dataclasses.replace(analysis.runs[0], settings=RunSettings(overrides={"lame": {"minutes": 10}}))
    out = io.StringIO()
    show(dataclasses.replace(analysis, runs=(run,)), Console(file=out, width=200, force_terminal=False))
    assert out.getvalue().splitlines()[1] == "set with --set: lame.minutes = 10"
    out = io.StringIO()
    show(analysis, Console(file=out, width=200, force_terminal=False))
    assert "--set" not in out.getvalue()


def test_the_stored_run_keeps_its_size_and_what_was_set(tmp_path: Path):
    from shootout.base.model import Config, Metric, Run, WorkloadSpec
    from shootout.base.runfacts import RunFacts
    from shootout.store import Store

    assert RunSettings().size == DEFAULT_SIZE
    settings = RunSettings(size=WRITEUP_SIZE, overrides={"lame": {"minutes": 10}}, experiment="rpi64")
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = store.create_run(Run(
        id=0, created_at=1_700_000_000.0, status="complete", settings=settings,
        configs=[Config(name=n, target="host") for n in ("a", "b")],
        workloads=[WorkloadSpec(name="lame", category="media", description="w", metrics=(Metric("wall", "s"),),
                                headline="wall")],
        params={"lame": {"minutes": 10}}, facts=RunFacts()))
    stored = store.get_run(str(run_id))
    assert stored.settings.size == WRITEUP_SIZE and stored.settings.overrides == {"lame": {"minutes": 10}}
