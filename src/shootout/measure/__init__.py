"""Measuring: the plan, the runner and what serves it (trials, stopping, lanes, live state, events,
the binaries each side runs, the clock loop read before every round, runs across boots)."""
