"""Honest conditions: the machine's facts, load gate, governor, throttling and a run monitor (the
measured clock is measure.clock's: its loop is compiled on the host place, above this layer).

Import from the submodules (this package imports nothing, so that they can use each other):
  machinefacts.machine_facts        what the machine is (CPU, board, kernel, governor, caches)
  preflight.preflight / Preflight   what the machine looks like before a run
  governor.tune                     --tune: performance governor through the change journal
  throttling.decode_throttled, kernel_events_since
  kernellog.sort_events / describe  the kernel log's throttling, under-voltage and OOM kills, apart
  monitor.Monitor                   background sampler and per-trial windows
  clockflags.clock_drop, reference_mhz   what those readings mean (pure; analysis uses them)
  runflags.RunConditions            flags against the run's typical trial; machine-wide lines
Every probe takes a `root` so tests can point it at a fake /proc and /sys tree.
"""
