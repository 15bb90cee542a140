"""Swap setups and memory limits: the spec in shootout.toml, the swap switched per trial, cgroups, counters."""
