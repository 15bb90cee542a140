"""Configuration parts from shootout.toml: keys, options, sub-keys claimed by later parts, storage."""

from __future__ import annotations

from typing import Any

import pytest

from shootout import parts
from shootout.base.errors import UsageError
from shootout.base.model import (
    Config,
    Metric,
    Run,
    RunSettings,
    Trial,
    TrialSpec,
    WorkloadSpec,
)
from shootout.base.runfacts import RunFacts
from shootout.configs.specs import load_file
from shootout.judge.inforce import compared_notes
from shootout.parts.part import Part
from shootout.store import Store

TOML = '''
[[config]]
name = "zswap"
spec = "host"
sysctl = { "vm.dirty_ratio" = "50" }
sysfs = { "/sys/module/zswap/parameters/enabled" = "Y" }
scratch = { fs = "btrfs", mount = "compress=zstd:3", size = "4G" }
options = { script = "slow" }
'''


def test_settings_scratch_and_options_come_from_the_config_table(tmp_path):
    f = tmp_path / "shootout.toml"
    f.write_text(TOML)
    config = load_file(f).configs["zswap"]
    assert config.parts == {
        "settings": {"sysctl": {"vm.dirty_ratio": "50"}, "sysfs": {"/sys/module/zswap/parameters/enabled": "Y"}},
        "scratch": {"fs": "btrfs", "mount": "compress=zstd:3", "size": 4 * 2**30, "in": "/var/tmp"},
    }
    assert config.option("script") == "slow"  # options were dropped before


def test_unknown_keys_name_the_part_keys_too(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('[[config]]\nname = "x"\nsysctls = { "vm.dirty_ratio" = "5" }\n')
    with pytest.raises(UsageError) as err:
        load_file(f)
    assert "unknown key(s) sysctls" in err.value.message and "sysctl" in err.value.hint and "scratch" in err.value.hint


class _Throttle(Part):
    """A later part that reads a sub-key of another part's table, as a throttle of the scratch would."""

    name = "throttle"
    keys = ("scratch.throttle",)

    def parse(self, table: dict[str, Any], where: str) -> Any:
        return table["scratch"]["throttle"]

    def open(self, configs, journal, scratches):
        return None


def test_a_part_registered_in_one_line_can_claim_a_sub_key(tmp_path, monkeypatch):
    monkeypatch.setitem(parts.PARTS, "throttle", _Throttle())
    f = tmp_path / "s.toml"
    f.write_text('[[config]]\nname = "slow"\nscratch = { fs = "ext4", size = "1G", throttle = "30MB/s" }\n')
    config = load_file(f).configs["slow"]
    assert config.parts["throttle"] == "30MB/s"
    assert config.parts["scratch"] == {"fs": "ext4", "mount": "", "size": 2**30, "in": "/var/tmp"}
    monkeypatch.delitem(parts.PARTS, "throttle")
    with pytest.raises(UsageError, match="unknown key"):  # without the part, the sub-key is an error
        load_file(f)


def test_a_stored_configuration_whose_part_this_version_lacks_is_unusable():
    assert parts.parts_problem(Config(name="x", parts={"vpn": {"kind": "wg"}})) == \
        "it sets vpn, which this shootout does not know"


def _trial(config: str, rnd: int, in_force: dict) -> Trial:
    return Trial(TrialSpec(rnd, 0, "w", config), {"m": 1.0}, 1, 1, 0, 1, 1, 0, "", 0.0, in_force=in_force)


def test_parts_and_in_force_survive_the_database_and_a_results_file(tmp_path):
    a = Config(name="a")
    b = Config(name="b", parts={"settings": {"sysctl": {"vm.dirty_ratio": "50"}}})
    spec = WorkloadSpec("w", "user", "d", (Metric("m", "s"),), "m")
    run = Run(0, 0.0, "complete", RunSettings(), [a, b], [spec], {}, RunFacts())
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = store.create_run(run)
    store.add_trial(run_id, _trial("b", 1, {"settings": {"vm.dirty_ratio": "50"}}))
    assert store.get_run(run_id).configs == [a, b]
    assert store.trials(run_id)[0].in_force == {"settings": {"vm.dirty_ratio": "50"}}
    copy = store.import_run(store.export_run(run_id))
    assert store.get_run(copy).configs[1].parts == b.parts
    assert store.trials(copy)[0].in_force == {"settings": {"vm.dirty_ratio": "50"}}


def test_what_differs_in_force_is_the_point_of_the_comparison():
    a, b = Config(name="a", label="plain"), Config(name="b", label="dirty")
    run = Run(1, 0.0, "complete", RunSettings(), [a, b], [], {},
              RunFacts(sides={"a": {"scratch": {"filesystem": "ext4"}}, "b": {"scratch": {"filesystem": "btrfs"}}}))
    trials = [_trial("a", r, {"settings": {"vm.dirty_ratio": "20", "vm.swappiness": "60"}}) for r in (1, 2)]
    trials += [_trial("b", r, {"settings": {"vm.dirty_ratio": "50", "vm.swappiness": "60"}}) for r in (1, 2)]
    assert compared_notes(run, trials) == ["what is compared: scratch.filesystem = ext4 (plain), btrfs (dirty)",
                                           "what is compared: vm.dirty_ratio = 20 (plain), 50 (dirty)"]


@pytest.mark.parametrize("target", ["ssh", "vm"])
def test_a_part_that_changes_this_machine_is_refused_for_a_remote_target(target: str) -> None:
    config = Config(name="r", target=target, parts={"settings": {"sysctl": {"vm.dirty_ratio": "50"}}})
    problem = parts.parts_problem(config)
    assert problem is not None and "\n" not in problem
    assert problem.startswith("it sets settings, which shootout changes on this machine only")
    assert parts.parts_problem(Config(name="r", target=target)) is None
