"""`shootout run` at its edges: one configuration, no monitor, a finished run resumed, Ctrl-C from a script."""

from __future__ import annotations

from pathlib import Path

NAP = '[[workload]]\nname = "nap"\ncommand = "sleep 0.3"\n'


def _toml(tmp_path: Path) -> Path:
    toml = tmp_path / "shootout.toml"
    toml.write_text(NAP)
    return toml


def test_no_monitor_says_what_it_turns_off(shootout, tmp_path):
    done = shootout("run", "-c", "host", "-f", str(_toml(tmp_path)), "-w", "nap", "--no-monitor",
                    "--max-rounds", "6", "--db", shootout.db)
    assert done.returncode == 0, done.stderr
    said = " ".join((done.stdout + done.stderr).split())
    assert ("monitor off (--no-monitor): no samples of clock, temperature, throttling, load or steal during the "
            "trials") in said, said
    assert "trials that other programs interrupted are still set aside and measured again" in said
