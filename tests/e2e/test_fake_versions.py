"""Through the runner: tool versions come from each target, and one that differs between the
configurations is reported as a confounder; the workload's files are gone afterwards."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from shootout.base.model import Config, RunSettings
from shootout.judge.analysis import analyze
from shootout.measure.runner import Runner, RunRequest
from shootout.places.fake import SCRIPTS, FakeTarget
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.media import Flac

FLAC = {"A": "flac 1.4.2", "B": "flac 1.4.3"}
seen_dirs: set[Path] = set()


def script(argv: Sequence[str], config: str, n: int) -> str:
    if list(argv) == ["flac", "--version"]:
        return FLAC[config] + "\n"
    if argv[0] == "df":  # the room in the work directory: plenty
        return f"Filesystem 1024-blocks Used Available Capacity Mounted on\nfake 8388608 0 8388608 0% {argv[-1]}\n"
    out = next(Path(word.strip("'")) for word in argv[-1].split() if "flac-out" in word)
    assert out.parent.is_dir()  # the workload's own directory, made by prepare()
    seen_dirs.add(out.parent)
    seconds = 2.0 + (n % 5) / 100 + (0.1 if config == "B" else 0.0)
    return (f"cpu encode {seconds - 0.05:.3f} 0.040\nstep encode 100.000000000 {100 + seconds:.9f}\n"
            f"cpu decode_reencode {2 * seconds - 0.1:.3f} 0.080\n"
            f"step decode_reencode 200.000000000 {200 + 2 * seconds:.9f}\nlossless 1\n")


def test_a_flac_version_that_differs_is_listed_as_a_confounder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path / "home"))
    SCRIPTS["versions"] = script
    left: list[bool] = []

    class Recording(FakeTarget):
        def close(self) -> None:
            left.append(any(d.exists() for d in seen_dirs))
            super().close()

    def factory(config: Config, journal: Journal) -> FakeTarget:
        return Recording(config, journal)

    configs = [Config(name=n, target="fake", options=(("script", "versions"),)) for n in ("A", "B")]
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    request = RunRequest(configs, [Flac()], RunSettings(seed=3, max_rounds=6), params={"flac": {"minutes": 0.01}})
    run_id = Runner(store, Journal(tmp_path), target_factory=factory).start(request)
    run = store.get_run(run_id)
    assert run.status == "complete"
    assert run.facts.workload("B", "flac")["versions"]["flac"] == "flac 1.4.3"
    assert run.params["flac"]["level"] == 5 and run.params["flac"]["minutes"] == 0.01  # defaults, then overrides
    comparisons = analyze(run, store.trials(run_id)).comparisons
    assert comparisons and all("versions.flac: flac 1.4.2 vs flac 1.4.3" in c.confounders for c in comparisons)
    # cleanup ran after the last trial, before the targets closed
    assert len(seen_dirs) == 2 and left == [False, False]
