"""The cloud-openssl experiment: what it asks of the user, its matrix, and its write-up lines."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from shootout.base.errors import UsageError
from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec
from shootout.base.runfacts import RunFacts
from shootout.experiments import experiment
from shootout.experiments.cloud_openssl import ALGORITHMS, SIZES
from shootout.judge.groupscompare import analyze_groups
from shootout.request.request import Wish, build_request
from shootout.workloads.catalogue import workload


def _request(tmp_path: Path, configs: list[str], prices: list[str], file: str | None = None):
    path = None
    if file is not None:
        path = tmp_path / "machines.toml"
        path.write_text(file)
    return build_request(Wish(configs=configs, experiment="cloud-openssl", file=path, prices=prices), lambda s: None)


def test_the_write_ups_matrix_with_multi_on_each_machines_cpus(tmp_path: Path) -> None:
    request = _request(tmp_path, ["ssh:a1", "ssh:m5"], ["ssh:a1=0.408", "ssh:m5=0.768"])
    params = request.params["openssl-speed"]
    assert params["algorithms"] == list(ALGORITHMS) and params["sizes"] == list(SIZES)
    assert params["multi"] is True and params["threads"] == 0
    assert request.settings.prices == {"ssh:a1": 0.408, "ssh:m5": 0.768}
    assert [w.spec.name for w in request.workloads] == ["openssl-speed"]


def test_groups_of_instances_come_from_the_file_and_are_priced_by_group(tmp_path: Path) -> None:
    file = ('[[config]]\nname = "a1"\nmachines = ["ssh:a1-1", "ssh:a1-2"]\n'
            '[[config]]\nname = "m5"\nmachines = ["ssh:m5-1", "ssh:m5-2"]\n')
    request = _request(tmp_path, [], ["a1=0.408", "m5=0.768"], file)
    assert [c.name for c in request.configs] == ["a1@ssh:a1-1", "a1@ssh:a1-2", "m5@ssh:m5-1", "m5@ssh:m5-2"]
    assert request.settings.prices == {"a1": 0.408, "m5": 0.768}


@pytest.mark.parametrize("configs, prices, file, said", [
    ([], ["a=1"], None, "experiment cloud-openssl measures the machines you name, and none was named"),
    (["ssh:a", "ssh:b"], [], None, "experiment cloud-openssl compares performance per price, and no price was given"),
    (["ssh:a", "ssh:b"], ["ssh:a=1", "ssh:b=2", "ssh:c=3"], None, "--price names unknown configuration(s) ssh:c"),
    (["g"], ["g@ssh:a=1"], '[[config]]\nname = "g"\nmachines = ["ssh:a", "ssh:b"]\n',
     "--price names unknown configuration(s) g@ssh:a"),
    (["ssh:a", "ssh:b"], ["ssh:a=1", "ssh:b=2"], '[params.openssl-speed]\nseconds = 3\n',
     "[params] with --experiment cloud-openssl: the experiment chooses what runs"),
])
def test_bad_input_is_one_line(tmp_path: Path, configs, prices, file, said) -> None:
    with pytest.raises(UsageError) as err:
        _request(tmp_path, configs, prices, file)
    assert said in err.value.message and "\n" not in err.value.message


def test_the_explanation_sets_kbs_beside_the_write_up_and_divides_by_the_price() -> None:
    rng = np.random.default_rng(4)
    spec = workload("openssl-speed").spec
    configs, trials = [], []
    for group, level in (("a1", 1.0), ("m5", 2.0)):
        for i in range(3):
            name = f"{group}@ssh:{group}-{i}"
            configs.append(Config(name=name, target="ssh", options=(("group", group),)))
            own = math.log(level) + rng.normal(0, 0.02)
            for r in range(1, 7):
                values = {f"{a.replace('-', '_')}_{s}{form}_mt": 1e6 * math.exp(own + rng.normal(0, 0.01))
                          for a in ALGORITHMS for s in SIZES for form in ("", "_noevp")}
                values["geomean_16384_mt"] = values["md5_16384_mt"]
                trials.append(Trial(TrialSpec(r, 0, spec.name, name), values, 1.0, 1.0, 0.0, 1, 1, 0, "", 0.0))
    settings = RunSettings(experiment="cloud-openssl", prices={"a1": 0.408, "m5": 0.768})
    run = Run(1, 0.0, "complete", settings, configs, [spec], {spec.name: {}}, RunFacts())
    lines = experiment("cloud-openssl").explain(analyze_groups(run, trials))
    text = "\n".join(lines)
    assert "docs/writeups.md, section C" in lines[0]
    assert "the write-up at 16384 bytes, sha256: a1.4xlarge 18,250,851, m5.4xlarge 3,480,366, c5.4xlarge 3,818,106" in text
    # each algorithm -evp, and without it as the write-up named it, with the path that form takes
    assert any(line.startswith("  a1 (3 machines), md5 -evp: 16384: ") for line in lines)
    assert any(line.startswith("  a1 (3 machines), aes-128-cbc without -evp: 16384: ") for line in lines)
    assert "aes-128-cbc, aes-192-cbc, aes-256-cbc: OpenSSL 3: EVP_Cipher on the -evp implementation" in text
    (m5,) = [line for line in lines if line.startswith("  m5 (3 machines) (0.768 $/h")]
    # twice as fast at 1.88 times the price: about 1.06 per price, with an interval around it
    head = m5.split("geomean of the algorithms at 16384 bytes ")[1].split(";")[0]
    ratio, low, high = float(head.split("x")[0]), *map(float, head.split("[")[1].split("]")[0].split(", "))
    assert low < ratio < high and abs(ratio - 2 / (0.768 / 0.408)) < 0.05


def test_each_machines_own_crypto_instructions_not_this_ones_pi_note() -> None:
    """The machines measured are remote: their own AES/SHA flags are named beside the write-up's
    instances', and this machine's flags (the Pi 4 note of the other write-ups) are not used."""
    spec = workload("openssl-speed").spec
    configs = [Config(name=n, target="ssh") for n in ("ssh:arm", "ssh:x86")]
    flags = {"ssh:arm": ["aes", "sha1", "sha2", "asimd"], "ssh:x86": ["aes", "avx2"]}
    trials = [Trial(TrialSpec(r, 0, spec.name, c.name), {"geomean_16384": 1e6 + r + i}, 1.0, 1.0, 0.0, 1, 1, 0, "", 0.0)
              for r in range(1, 7) for i, c in enumerate(configs)]
    facts = RunFacts(machine={"cpu_flags": ["aes", "sha_ni"]},
                     sides={c.name: {"target": {"remote": c.name[4:], "machine": {"cpu_flags": flags[c.name]}}}
                            for c in configs})
    run = Run(1, 0.0, "complete", RunSettings(experiment="cloud-openssl"), configs, [spec], {spec.name: {}}, facts)
    text = "\n".join(experiment("cloud-openssl").explain(analyze_groups(run, trials)))
    assert "AES and SHA instructions of the machines measured: ssh:arm aes, sha1, sha2; ssh:x86 aes " in text
    assert "Pi 4" not in text
