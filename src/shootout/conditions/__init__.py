"""Honest conditions: load gate, governor, measured clock, throttling and a run monitor.

Import from the submodules (this package imports nothing, so shootout.conditions.machinefacts can use them):
  preflight.preflight / Preflight   what the machine looks like before a run
  governor.tune                     --tune: performance governor through the change journal
  clock.measure_mhz                 the effective clock from a dependent-add loop
  throttling.decode_throttled, kernel_events_since
  kernellog.sort_events / describe  the kernel log's throttling, under-voltage and OOM kills, apart
  monitor.Monitor                   background sampler and per-trial windows
  flags.clock_drop / reference_mhz  what those readings mean (pure; analysis uses them)
  runflags.RunConditions            flags against the run's typical trial; machine-wide lines
  noise.noise_floor_key             where a machine's A/A noise floor is stored
Every probe takes a `root` so tests can point it at a fake /proc and /sys tree.
"""
