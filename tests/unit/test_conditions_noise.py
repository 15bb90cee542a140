"""Noise floor keyed per machine."""

from __future__ import annotations

from typing import Any

import pytest

from shootout.conditions.noise import load_noise_floor, noise_floor_key, save_noise_floor
from shootout.errors import UsageError


class DictStore:
    def __init__(self) -> None:
        self.settings: dict[str, dict[str, Any]] = {}

    def put_setting(self, key: str, value: dict[str, Any]) -> None:
        self.settings[key] = value

    def get_setting(self, key: str) -> dict[str, Any] | None:
        return self.settings.get(key)


def test_key_is_per_machine() -> None:
    assert noise_floor_key({"machine_id": "mabc", "hostname": "pi"}) == "noise-floor/mabc"
    assert noise_floor_key({"machine_id": None, "hostname": "pi"}) == "noise-floor/pi"
    with pytest.raises(UsageError):
        noise_floor_key({})


def test_stored_floor_is_found_on_the_same_machine_only() -> None:
    store = DictStore()
    here, there = {"machine_id": "m1"}, {"machine_id": "m2"}
    save_noise_floor(store, here, {"run": 7, "halfwidth": 0.004})
    assert load_noise_floor(store, here) == {"run": 7, "halfwidth": 0.004}
    assert load_noise_floor(store, there) is None
