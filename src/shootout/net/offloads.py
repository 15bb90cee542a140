"""veth offloads: set with `ethtool -K`, read back with `ethtool -k`, never assumed.

The Raspberry Pi article turned the "fake" offloads of a veth pair off before measuring
TCP between containers: `ethtool -K veth0 tx off rx off tso off gro off gso off`. A
configuration says "on" or "off" for that same set of five, on both peers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from shootout.base.errors import TargetError
from shootout.execution.tools import host_tool
from shootout.net.netns import NetNamespace

# ethtool -K keyword -> the feature name `ethtool -k` prints
FEATURES: dict[str, str] = {
    "tx": "tx-checksumming",
    "rx": "rx-checksumming",
    "tso": "tcp-segmentation-offload",
    "gso": "generic-segmentation-offload",
    "gro": "generic-receive-offload",
}
STATES = ("on", "off")
_LINE = re.compile(r"^([a-z0-9-]+):\s+(on|off)(\s+\[(fixed|requested on)\])?\s*$")


def parse_features(text: str) -> dict[str, str]:
    """`ethtool -k DEV` output -> feature -> "on" | "off" (with " [fixed]" when it cannot change)."""
    features = {}
    for line in text.splitlines():
        if m := _LINE.match(line.strip()):
            features[m.group(1)] = m.group(2) + (f" [{m.group(4)}]" if m.group(4) else "")
    return features


def mismatches(wanted: str, features: Mapping[str, str]) -> list[str]:
    """The five features that are not in the wanted state, as 'name=state'."""
    return [f"{name}={features.get(name, 'absent')}" for name in FEATURES.values()
            if features.get(name, "").split(" ")[0] != wanted]


def summary(features: Mapping[str, str]) -> str:
    """The five features in one word when they agree ("off"), else each one."""
    states = {features.get(name, "absent").split(" ")[0] for name in FEATURES.values()}
    if len(states) == 1:
        return states.pop()
    return ", ".join(f"{name}={features.get(name, 'absent')}" for name in FEATURES.values())


def read(ns: NetNamespace, dev: str) -> dict[str, str]:
    """The five features as the kernel reports them now."""
    host_tool("ethtool", "ethtool")
    features = parse_features(ns.run(["ethtool", "-k", dev], f"ethtool -k {dev}"))
    return {name: features.get(name, "absent") for name in FEATURES.values()}


def apply(ns: NetNamespace, dev: str, wanted: str) -> dict[str, str]:
    """Set the five offloads of dev to wanted; returns what is in force, read back."""
    if wanted not in STATES:
        raise TargetError(f"veth offloads must be 'on' or 'off', not {wanted!r}", 'veth = { offloads = "off" }')
    if mismatches(wanted, current := read(ns, dev)):
        args = [word for key in FEATURES for word in (key, wanted)]
        # exit status 1 may only mean "nothing changed": the read-back decides
        ns.run(["ethtool", "-K", dev, *args], f"ethtool -K {dev}", check=False)
        current = read(ns, dev)
    if bad := mismatches(wanted, current):
        raise TargetError(f"veth offloads of {dev} did not turn {wanted}: {', '.join(bad)}",
                          "this driver does not allow it; use the other offloads setting")
    return current
