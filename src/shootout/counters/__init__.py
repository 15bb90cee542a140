"""What the two sides did differently: counters recorded beside the headline, never judged.

Per trial (every machine): the trial's rusage (max RSS, page faults, context switches) and,
where the machine reports it, the energy it used (energy.py). Once per side and workload,
untimed, after the rounds: the PMU's counters through `perf stat` where the machine has one
(perfstat.py), else valgrind's cachegrind as a model said to be one (cachegrind.py); the size
of the code that ran (codesize.py) and the instruction-set paths its libraries chose
(codepaths.py). judge/why.py turns them into ratios and the "why" line.
"""
