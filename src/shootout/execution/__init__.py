"""The bottom of the house: running commands somewhere, and what a place is.

Processes and their results (process), the clean PATH and host-tool lookup (tools), tool
versions (versions), the facts workloads size their work by and their parsers (facts), and
the protocol of what running somewhere means (place). Targets implement Place; build, net,
swap, userspace and vm type against it and never import targets.
"""
