"""Measuring: the plan, the runner and what serves it (trials, stopping, lanes, live state, events)."""
