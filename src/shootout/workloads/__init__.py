"""Workload families, one module each; registry.py holds the catalogue and the suites."""
