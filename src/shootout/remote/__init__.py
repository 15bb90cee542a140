"""Machines reached over SSH: the channel, the remote helper and its session, probes."""
