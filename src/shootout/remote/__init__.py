"""Machines reached over SSH: the channel, the remote helper, probes and the file bridge."""
