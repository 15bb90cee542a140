"""Configurations: specs and shootout.toml tables parsed into Config records, groups of machines, userspaces."""
