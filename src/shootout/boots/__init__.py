"""Runs across reboots: configurations that differ in the running kernel, one block per boot."""
