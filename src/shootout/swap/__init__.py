"""Swap and memory pressure: swap files and devices, zram, zswap, memory limits and what they saw."""
