"""counters/energy.py: which source a machine has, and the joules a trial used by each.

The sysfs trees under tests/fixtures/energy are written from the formats (its README); each test
copies one to tmp_path and writes new counter values between start() and stop(), as a trial would
move them. Sampled sources get a fake clock where the answer must be exact."""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shootout.counters import energy
from shootout.counters.energy import NONE_FOUND, EnergySource, find_source, integrate, meter_watts, pmic_rails

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "energy"
PMIC_TEXT = (FIXTURES / "vcgencmd_pmic_read_adc").read_text()
RAPL_ZONE = "class/powercap/intel-rapl:0"
RAPL_BEFORE = 31337410325  # the fixture's package-0 energy_uj
RAPL_WRAP = 262143328850  # its max_energy_range_uj


def no_vcgencmd() -> str | None:
    return None


def tree(tmp_path: Path, name: str) -> Path:
    """A writable copy of a fixture tree: the /sys a source is found under."""
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


def source(sys_root: Path, **kwargs: object) -> EnergySource:
    found = find_source(sys_root=sys_root, vcgencmd=no_vcgencmd, **kwargs)  # type: ignore[arg-type]
    assert isinstance(found, EnergySource), found
    return found


def write(path: Path, value: object) -> None:
    path.write_text(f"{value}\n")


def fake_clock(monkeypatch: pytest.MonkeyPatch, *stamps: float) -> list[float]:
    """energy.clock gives these stamps in turn (and fails the test if asked once more); the list
    returned holds those given so far."""
    given: Iterator[float] = iter(stamps)
    asked: list[float] = []

    def clock() -> float:
        asked.append(next(given))
        return asked[-1]

    monkeypatch.setattr(energy, "clock", clock)
    return asked


def script(tmp_path: Path, name: str, body: str) -> str:
    """A meter command: a shell script in tmp_path."""
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


# RAPL


def test_rapl_counts_the_package_zone_and_not_its_subzones(tmp_path: Path) -> None:
    sys_root = tree(tmp_path, "rapl")
    found = source(sys_root)
    assert (found.kind, found.label) == ("rapl", "RAPL package-0 (powercap)")
    reading = found.start()
    write(sys_root / RAPL_ZONE / "energy_uj", RAPL_BEFORE + 12_345_678)
    write(sys_root / "class/powercap/intel-rapl:0:1/energy_uj", 9_999_999_999)  # dram: inside the package
    assert reading.stop() == 12.345678


def test_a_rapl_counter_that_wrapped_counts_up_to_its_range_and_on_from_zero(tmp_path: Path) -> None:
    sys_root = tree(tmp_path, "rapl")
    write(sys_root / RAPL_ZONE / "energy_uj", RAPL_WRAP - 328_850)
    reading = source(sys_root).start()
    write(sys_root / RAPL_ZONE / "energy_uj", 1_000_000)
    assert reading.stop() == 1.32885


def zone(sys_root: Path, number: int, name: str, energy_uj: int) -> Path:
    path = sys_root / f"class/powercap/intel-rapl:{number}"
    path.mkdir(parents=True)
    write(path / "name", name)
    write(path / "energy_uj", energy_uj)
    write(path / "max_energy_range_uj", RAPL_WRAP)
    return path / "energy_uj"


def test_rapl_sums_the_packages_and_leaves_psys_out_where_packages_are_listed(tmp_path: Path) -> None:
    first, second = zone(tmp_path, 0, "package-0", 100), zone(tmp_path, 1, "package-1", 200)
    psys = zone(tmp_path, 2, "psys", 300)
    found = source(tmp_path)
    assert found.label == "RAPL package-0 + package-1 (powercap)"
    reading = found.start()
    write(first, 1_000_100)
    write(second, 2_500_200)
    write(psys, 9_000_300)
    assert reading.stop() == 3.5


def test_rapl_uses_psys_where_it_is_the_only_zone(tmp_path: Path) -> None:
    psys = zone(tmp_path, 0, "psys", 5_000)
    found = source(tmp_path)
    assert found.label == "RAPL psys (powercap)"
    reading = found.start()
    write(psys, 7_755_000)
    assert reading.stop() == 7.75


def test_an_unreadable_energy_uj_makes_rapl_unusable_and_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys_root = tree(tmp_path, "rapl")
    read_text = Path.read_text

    def refusing(path: Path, *args: object, **kwargs: object) -> str:
        if path.name == "energy_uj":
            raise PermissionError(13, "Permission denied")
        return read_text(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", refusing)
    assert find_source(sys_root=sys_root, vcgencmd=no_vcgencmd) == (
        f"{NONE_FOUND}; RAPL powercap: {sys_root / RAPL_ZONE / 'energy_uj'}: permission denied (root can read it)")


def test_a_counter_gone_during_the_trial_gives_none_and_the_reason(tmp_path: Path) -> None:
    sys_root = tree(tmp_path, "rapl")
    reading = source(sys_root).start()
    (sys_root / RAPL_ZONE / "energy_uj").unlink()
    assert reading.stop() is None
    assert reading.problem == f"{sys_root / RAPL_ZONE / 'energy_uj'}: No such file or directory"


# hwmon


def test_hwmon_energy_counts_the_socket_not_its_cores_again(tmp_path: Path) -> None:
    sys_root = tree(tmp_path, "hwmon-energy")
    found = source(sys_root)
    assert (found.kind, found.label) == ("hwmon-energy", "hwmon energy: amd_energy Esocket0")
    reading = found.start()
    device = sys_root / "class/hwmon/hwmon1"
    write(device / "energy1_input", 8812345678 + 1_000_000)
    write(device / "energy3_input", 52000000000 + 3_500_000)
    assert reading.stop() == 3.5


def test_an_hwmon_energy_counter_that_went_back_gives_none(tmp_path: Path) -> None:
    sys_root = tree(tmp_path, "hwmon-energy")
    reading = source(sys_root).start()
    write(sys_root / "class/hwmon/hwmon1/energy3_input", 5)
    assert reading.stop() is None
    assert reading.problem == f"{sys_root / 'class/hwmon/hwmon1/energy3_input'} went back from 52000000000 to 5"


def test_hwmon_power_is_sampled_and_integrated_over_the_trial(tmp_path: Path) -> None:
    sys_root = tree(tmp_path, "hwmon-power")
    found = source(sys_root)
    assert (found.kind, found.label) == ("hwmon-power", "hwmon power: ina219 power1, sampled every 0.2 s")
    begun = time.monotonic()
    reading = found.start()
    time.sleep(0.5)
    joules = reading.stop()
    took = time.monotonic() - begun
    assert joules is not None and 2.5 * 0.5 <= joules <= 2.5 * took  # 2.5 W all along


def test_a_trial_too_short_for_the_sampler_takes_the_mean_of_its_readings_times_its_duration(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys_root = tree(tmp_path, "hwmon-power")
    power = sys_root / "class/hwmon/hwmon1/power1_input"
    write(power, 4_000_000)
    found = dataclasses.replace(source(sys_root), interval_s=3600.0)
    # stamps: the reading at start (begun, done), the trial's start, its end, the reading at stop
    fake_clock(monkeypatch, 0.0, 0.1, 10.0, 12.5, 12.6, 12.7)
    reading = found.start()
    write(power, 6_000_000)
    assert reading.stop() == 12.5  # (4 W + 6 W) / 2 × 2.5 s


@pytest.mark.parametrize(("stamps", "watts", "joules"), [
    # one sample of the thread's at 1 s: (4 + 10 + 4) W / 3 × 4 s, not the trapezoid's 28 J
    ((0, 0, 0, 1, 1, 4, 4, 4), (4, 10, 4), 24.0),
    # two, at 1 s and 2 s: the trapezoid, 7 + 10 + 14 J
    ((0, 0, 0, 1, 1, 2, 2, 4, 4, 4), (4, 10, 10, 4), 31.0),
    # the second stamped at 5 s, after the trial's end at 4 s (in flight at stop): counted up to the end
    ((0, 0, 0, 1, 1, 5, 5, 4, 4, 4), (4, 10, 10, 4), 37.0),
])
def test_the_thread_samples_are_integrated_by_the_trapezoid_rule_from_two_on(
        monkeypatch: pytest.MonkeyPatch, stamps: tuple[float, ...], watts: tuple[float, ...], joules: float) -> None:
    asked = fake_clock(monkeypatch, *stamps)
    given = iter(watts)
    reading = EnergySource("meter", "test", sample=lambda: next(given), interval_s=0.2).start()
    deadline = time.monotonic() + 5
    while len(asked) < len(stamps) - 3 and time.monotonic() < deadline:  # the thread's samples, all taken
        time.sleep(0.01)
    assert reading.stop() == joules


def test_the_trapezoid_rule_over_samples() -> None:
    points = [(0.0, 2.0), (1.0, 4.0), (3.0, 4.0), (3.5, 0.0)]
    assert integrate(points, 0.0, 3.5, by_mean=False) == 3.0 + 8.0 + 1.0
    assert integrate(points, 0.0, 3.5, by_mean=True) == 2.5 * 3.5


def test_the_sampler_thread_samples_during_the_trial_and_always_ends(tmp_path: Path) -> None:
    taken: list[float] = []

    def sample() -> float:
        taken.append(time.monotonic())
        return 1.0

    reading = EnergySource("hwmon-power", "test", sample=sample, interval_s=0.05).start()
    time.sleep(0.3)
    assert reading.stop() is not None
    assert 4 <= len(taken) <= 9  # at start, ~5 by the thread, at stop
    assert not reading._thread.is_alive() and reading._thread.daemon  # type: ignore[attr-defined]


def test_a_power_sensor_gone_during_the_trial_gives_none_and_the_thread_ends(tmp_path: Path) -> None:
    sys_root = tree(tmp_path, "hwmon-power")
    reading = dataclasses.replace(source(sys_root), interval_s=0.02).start()
    write(sys_root / "class/hwmon/hwmon1/power1_input", "garbage")
    time.sleep(0.1)
    assert not reading._thread.is_alive()  # type: ignore[attr-defined]
    assert reading.stop() is None
    power = sys_root / "class/hwmon/hwmon1/power1_input"
    assert reading.problem == f"{power}: invalid literal for int() with base 10: 'garbage'"


# Raspberry Pi 5 PMIC


def test_the_pmic_power_is_current_times_voltage_summed_over_the_rails_with_both() -> None:
    rails = pmic_rails(PMIC_TEXT)
    assert len(rails) == 12 and "EXT5V" not in rails and "BATT" not in rails
    assert rails["VDD_CORE"] == pytest.approx(0.68707400 * 0.87899070, abs=1e-15)
    assert sum(rails.values()) == pytest.approx(1.74083998084392, abs=1e-12)
    no_hdmi_volts = PMIC_TEXT.replace(" HDMI_V volt(23)=5.14507200V\n", "")
    assert sorted(pmic_rails(no_hdmi_volts)) == sorted(set(rails) - {"HDMI"})


def test_a_pi5_gives_its_pmic_rails_said_not_to_be_the_whole_board(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = iter([PMIC_TEXT, PMIC_TEXT, PMIC_TEXT.replace("0.68707400A", "1.68707400A")])
    found = find_source(sys_root=tree(tmp_path, "vm"), vcgencmd=lambda: next(answers))
    assert isinstance(found, EnergySource) and found.kind == "pmic"
    assert found.label == ("Pi 5 PMIC: 12 rails (vcgencmd pmic_read_adc), the PMIC's rails only, not the whole "
                           "board (USB, fan, HATs and the 5 V input are outside), sampled every 0.5 s")
    fake_clock(monkeypatch, 0.0, 0.0, 1.0, 3.0, 3.0, 3.0)
    reading = dataclasses.replace(found, interval_s=3600.0).start()
    # 2 s at 1.7408 W, then one more ampere on VDD_CORE (0.879 V): the mean of the two readings
    assert reading.stop() == pytest.approx((2 * 1.74083998084392 + 0.87899070) / 2 * 2.0, abs=1e-12)


def test_a_pi_without_a_pmic_command_has_no_source(tmp_path: Path) -> None:
    found = find_source(sys_root=tree(tmp_path, "vm"), vcgencmd=lambda: 'error=2 error_msg="Command not registered"')
    assert found == NONE_FOUND


# no source; an external meter


def test_a_vm_has_no_source_and_is_told_of_meter(tmp_path: Path) -> None:
    found = find_source(sys_root=tree(tmp_path, "vm"), vcgencmd=no_vcgencmd)
    assert found == NONE_FOUND
    assert found == ("energy: this machine reports none (no RAPL powercap, hwmon power or energy sensor, or Pi 5 "
                     "PMIC); --meter CMD reads an external meter")


def test_a_meter_command_is_sampled_and_wins_over_rapl(tmp_path: Path) -> None:
    command = script(tmp_path, "meter", "echo '5.0 W'")
    found = source(tree(tmp_path, "rapl"), meter=command)
    assert (found.kind, found.label, found.interval_s) == ("meter", f"meter: {command}", 0.5)
    begun = time.monotonic()
    reading = found.start()
    time.sleep(0.6)
    joules = reading.stop()
    took = time.monotonic() - begun
    assert joules is not None and 5.0 * 0.6 <= joules <= 5.0 * took


@pytest.mark.parametrize(("body", "said"), [
    ("echo oops; exit 3", "exited 3 and printed 'oops', not watts"),
    ("echo 5.0; echo busy >&2; exit 1", "exited 1 and printed '5.0 busy', not watts"),
    ("echo 'reading: n/a'", "exited 0 and printed 'reading: n/a', not watts"),
    ("true", "exited 0 and printed '', not watts"),
])
def test_a_meter_that_fails_is_one_line_saying_what_it_printed(tmp_path: Path, body: str, said: str) -> None:
    command = script(tmp_path, "meter", body)
    found = find_source(sys_root=tree(tmp_path, "vm"), meter=command, vcgencmd=no_vcgencmd)
    assert found == f"energy: --meter gives no reading: meter {command!r} {said}"


@pytest.mark.parametrize(("printed", "watts"), [
    ("5", 5.0), ("5.0W", 5.0), ("  12.5 w", 12.5), ("1e1", 10.0), (".5", 0.5), ("header\\n7.25 W", 7.25)])
def test_a_meter_prints_watts_maybe_with_a_w(tmp_path: Path, printed: str, watts: float) -> None:
    assert meter_watts(f"printf '{printed}\\n'") == watts


@pytest.mark.parametrize("printed", ["-3", "nan", "5 kW", "5 W extra"])
def test_a_meter_printing_no_watts_is_unreadable(printed: str) -> None:
    with pytest.raises(energy.EnergyUnreadable, match="not watts"):
        meter_watts(f"printf '{printed}\\n'")


def test_a_meter_that_breaks_during_the_trial_gives_none(tmp_path: Path) -> None:
    state = tmp_path / "state"
    write(state, "5.0")
    command = script(tmp_path, "meter", f"cat {state}")
    found = dataclasses.replace(source(tree(tmp_path, "vm"), meter=command), interval_s=3600.0)
    reading = found.start()
    write(state, "garbage")
    assert reading.stop() is None
    assert reading.problem == f"meter {command!r} exited 0 and printed 'garbage', not watts"
