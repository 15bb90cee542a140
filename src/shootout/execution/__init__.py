"""The bottom of the house: running commands somewhere, and what a place is.

Processes and their results (process) and their trees (tree), the clean PATH and host-tool
lookup (tools), reading /proc and /sys (fsread), tool versions (versions), the facts workloads
size their work by and their parsers (placefacts), ELF identity (elf), compiling C in a place
(build), and the protocol of what running somewhere means (place). The places implement Place;
everything below them types against it and never imports a place.
"""
