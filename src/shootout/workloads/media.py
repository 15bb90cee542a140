"""Audio encoding: FLAC and LAME on a long synthesized track, tmpfs to tmpfs.

The input is a deterministic stereo 44.1 kHz 16-bit WAV (inputs.music), 23.5 minutes by
default like the track of the published test; it is made once on the host, its sha256
recorded, and put into each target's work directory.

The headline is the encoder's CPU time (user + sys), the wall time beside it. Both encoders
run one thread from tmpfs to tmpfs, so their CPU time is their wall time on a quiet machine
(their ratio is in the metrics of every trial), while on a busy one the wall time also holds the time slices
other programs took, which is the noise a verdict pays for in rounds and not a property of
the userspace compared. The write-up timed the encode on a quiet Pi, where both agree.
"""

from __future__ import annotations

from typing import Any

from shootout.base.errors import WorkloadError
from shootout.base.model import Metric, WorkloadSpec
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.execution.versions import tool_version
from shootout.workloads import inputs
from shootout.workloads.contract import Context, Prepared, Tool, Workload
from shootout.workloads.shell import Step, q, step_cpu_seconds, step_seconds, timed_argv

# WorkloadSpec.timing of both encoders (the module docstring says why)
CPU_TIMING = ("the encoder's CPU time (user + sys): one thread that only computes, tmpfs to tmpfs; time slices "
              "other programs take while it waits do not count against it (wall time beside it)")


def _prepare_audio(ctx: Context, tool: str, copies: int = 0) -> Prepared:
    """The track in the target's work directory, which must have room for `copies` more
    files of its size (what a trial writes there at most)."""
    track = inputs.music(float(ctx.params["minutes"]))
    files = {"wav": inputs.place(ctx.target, track), "out": f"{ctx.workdir()}/{tool}-out"}
    if copies:
        _check_room(ctx, tool, copies * track.size)
    facts = {"input_sha256": track.sha256, "input_bytes": track.size, "minutes": float(ctx.params["minutes"])}
    return Prepared(files=files, facts=facts, versions={tool: tool_version(ctx.target, [tool, "--version"])})


def _check_room(ctx: Context, tool: str, needed: int) -> None:
    """A trial that fills its tmpfs fails mid-way (a VM's /dev/shm is half of its memory):
    refuse it before measuring, saying how much room it needs."""
    done = ctx.target.run(["df", "-P", "-k", ctx.workdir()], timeout=60)
    try:
        free = int(done.stdout.strip().splitlines()[-1].split()[3]) * 1024
    except (IndexError, ValueError):
        return  # no df to ask: the trial's own check still tells
    if free < needed:
        raise WorkloadError(f"{tool}: the work directory in {ctx.config.display} has {free / 1e6:.0f} MB free, "
                            f"a trial writes up to {needed / 1e6:.0f} MB there",
                            f"give the target more memory (tmpfs), or lower minutes ([params.{tool}])")


class Flac(Workload):
    spec = WorkloadSpec(
        name="flac",
        category="media",
        description="flac: encode a WAV of `minutes`, then decode to WAV and re-encode (tmpfs to tmpfs)",
        metrics=(Metric("encode_cpu_s", "s", "encode the WAV to FLAC: CPU time (user + sys)"),
                 Metric("encode_s", "s", "encode the WAV to FLAC: wall time"),
                 Metric("decode_reencode_cpu_s", "s", "decode the FLAC to WAV, then encode that WAV again: CPU time"),
                 Metric("decode_reencode_s", "s", "decode the FLAC to WAV, then encode that WAV again: wall time")),
        headline="encode_cpu_s",
        reproduces="A: flac encoding of a 23.5-minute track; D: FLAC decode to WAV then re-encode",
        timing=CPU_TIMING,
    )
    tools = (Tool("flac", "flac"), Tool("cmp", "diffutils"), Tool("date", "coreutils"), Tool("bash", "bash"))
    quick = {"minutes": 3.0}
    slow = "a 23.5-minute track encoded, decoded and encoded again"

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"minutes": 23.5, "level": 5}

    def prepare(self, ctx: Context) -> Prepared:
        return _prepare_audio(ctx, "flac", copies=3)  # the FLAC, the decoded WAV, the second FLAC

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        wav, out = q(prepared.files["wav"]), prepared.files["out"]
        enc, dec, re_ = q(out + ".flac"), q(out + "-dec.wav"), q(out + "-re.flac")
        level = f"-{int(params['level'])}"
        steps = [
            Step("encode", f"flac -s -f {level} -o {enc} {wav}"),
            # two commands, not `a && b`: under set -e a failed decode must end the trial with
            # flac's own error, not leave a missing WAV for the check below to call different
            Step("decode_reencode", f"flac -s -f -d -o {dec} {enc}; flac -s -f {level} -o {re_} {dec}"),
        ]
        # lossless round trip, checked outside the timed steps
        after = f"if cmp -s {wav} {dec}; then echo 'lossless 1'; else echo 'lossless 0'; fi; rm -f {enc} {dec} {re_}"
        return timed_argv(steps, setup=f"rm -f {enc} {dec} {re_}", after=after)

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        steps = ["encode", "decode_reencode"]
        seconds, cpu = step_seconds(result, steps), step_cpu_seconds(result, steps)
        if "lossless 1" not in result.stdout.splitlines():
            raise WorkloadError("flac: the decoded WAV differs from the input", "the flac in this userspace is broken")
        return {**{f"{s}_s": seconds[s] for s in steps}, **{f"{s}_cpu_s": cpu[s] for s in steps}}


class Lame(Workload):
    spec = WorkloadSpec(
        name="lame",
        category="media",
        description="lame: encode a WAV of `minutes` to MP3 (tmpfs to tmpfs)",
        metrics=(Metric("encode_cpu_s", "s", "encode the WAV to MP3: CPU time (user + sys)"),
                 Metric("encode_s", "s", "encode the WAV to MP3: wall time")),
        headline="encode_cpu_s",
        reproduces="A: lame encoding of a 23.5-minute track",
        timing=CPU_TIMING,
    )
    tools = (Tool("lame", "lame"), Tool("date", "coreutils"), Tool("bash", "bash"))
    quick = {"minutes": 1.0}
    slow = "a 23.5-minute track: 14-24 s of CPU a trial on 2 cores"

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"minutes": 23.5, "lame_args": []}  # lame's defaults: 128 kbit/s CBR, -q 3

    def prepare(self, ctx: Context) -> Prepared:
        return _prepare_audio(ctx, "lame")

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        wav, mp3 = q(prepared.files["wav"]), q(prepared.files["out"] + ".mp3")
        extra = " ".join(q(a) for a in params.get("lame_args", []))
        step = Step("encode", f"lame --quiet {extra} {wav} {mp3}".replace("  ", " "))
        after = f"echo \"mp3_bytes $(wc -c < {mp3})\"; rm -f {mp3}"
        return timed_argv([step], setup=f"rm -f {mp3}", after=after)

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        seconds, cpu = step_seconds(result, ["encode"]), step_cpu_seconds(result, ["encode"])
        sizes = [line.split()[1] for line in result.stdout.splitlines() if line.startswith("mp3_bytes ")]
        if not sizes or int(sizes[0]) < 1000:
            raise WorkloadError("lame wrote no MP3", "run lame by hand on a WAV file")
        return {"encode_s": seconds["encode"], "encode_cpu_s": cpu["encode"]}


WORKLOADS = (Flac, Lame)
