"""The network options of one configuration, as the network part parsed them (parts/network.py)."""

from __future__ import annotations

from dataclasses import dataclass

from shootout.base.model import Config

PART = "network"  # the part's name: key in Config.parts and Trial.in_force


@dataclass(frozen=True)
class NetOptions:
    offloads: str = "off"  # the article's setting
    drop: str = "tc"  # the article's "TC drop rule"
    vpn: str = "wireguard"
    cipher: str = "AES-256-GCM"  # OpenVPN's data-channel cipher
    wireguard: str = "auto"  # kernel module when present, else a current wireguard-go (net/wggo.py)
    pin: str | None = None  # name the namespaces PIN-<workload>-a/-b under /run/netns


def net_options(config: Config) -> NetOptions:
    """What a configuration runs with: the options it sets, defaults for the rest."""
    return NetOptions(**config.parts.get(PART, {}))
