"""Workload families, one module each; catalogue.py holds the catalogue and the suites."""
