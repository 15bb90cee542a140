"""Crypto workloads: the `openssl speed` matrix, and SHA-1 of a sparse file with two tools.

`openssl speed` takes an algorithm in two forms. With -evp (the default form here) it times the
EVP interface, the one programs use: the provider's implementation, with AES-NI, the ARMv8
crypto extensions or SHA instructions where OpenSSL's CPU check finds them. Without -evp
(form "noevp", `openssl speed sha256` as the write-ups quoted it) it times the algorithm's own
name, and what that runs depends on the OpenSSL version (apps/speed.c):
- OpenSSL 3: also EVP. Digests through EVP_Digest, the call -evp makes; ciphers through
  EVP_Cipher on the same provider implementation -evp reaches through EVP_EncryptUpdate. The
  two forms take the same code path (measured on an amd64 VM with AES-NI and SHA-NI, OpenSSL
  3.0.22, one core, 16384-byte blocks, 1 s each: md5 566 vs 573 MB/s, sha256 1,333 vs 1,309,
  aes-128-cbc 1,366 vs 1,388, aes-256-cbc 1,017 vs 1,009; no -evp first).
- OpenSSL before 3: the low-level functions. MD5(), SHA1(), SHA256() and SHA512() run the same
  assembly as EVP, with the same CPU checks (SHA instructions included); aes-*-cbc runs
  AES_cbc_encrypt, table-driven code that uses neither AES-NI nor the ARMv8 AES instructions
  (only EVP reaches those); bf-cbc runs BF_cbc_encrypt, the code EVP's Blowfish uses too.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from statistics import geometric_mean
from typing import Any

from shootout.base.errors import WorkloadError
from shootout.base.model import Metric, WorkloadSpec
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.execution.versions import tool_version
from shootout.places.target import Target
from shootout.workloads.contract import Context, Prepared, Tool, Workload
from shootout.workloads.openssl_output import ALL_SIZES, hw_paths, parse_speed
from shootout.workloads.shell import q, run_checked

_CPU = re.compile(r"^cpu (sha1sum|openssl) (\d+\.\d+) (\d+\.\d+)$")  # bash's time, TIMEFORMAT below

ALGORITHMS = ("md5", "sha1", "sha256", "sha512", "aes-128-cbc", "aes-192-cbc", "aes-256-cbc",
              "aes-128-gcm", "chacha20-poly1305", "bf-cbc")
LEGACY = {"bf-cbc"}  # in OpenSSL 3 these live in the legacy provider
HEADLINE_SIZE = 16384
FORMS = ("evp", "noevp")
# The algorithms `openssl speed` also takes without -evp, and the code path that form takes
NOEVP_PATHS = {
    **dict.fromkeys(("md5", "sha1", "sha256", "sha512"),
                    "OpenSSL 3: EVP_Digest, the -evp path; before 3: the low-level function, the same "
                    "assembly and CPU checks"),
    **dict.fromkeys(("aes-128-cbc", "aes-192-cbc", "aes-256-cbc"),
                    "OpenSSL 3: EVP_Cipher on the -evp implementation (AES instructions where the CPU has "
                    "them); before 3: AES_cbc_encrypt, table-driven, no AES instructions"),
    "bf-cbc": "OpenSSL 3: EVP_Cipher on the -evp implementation; before 3: BF_cbc_encrypt, EVP's code too",
}


def _key(alg: str) -> str:
    return alg.replace("-", "_")


def metric_name(alg: str, size: int, multi: bool, form: str = "evp") -> str:
    """'sha256_16384_mt' (-evp), 'sha256_16384_noevp_mt' (`openssl speed sha256`, no -evp)."""
    return f"{_key(alg)}_{size}" + ("_noevp" if form == "noevp" else "") + ("_mt" if multi else "")


def _speed_metrics() -> tuple[Metric, ...]:
    metrics = [Metric(f"geomean_{HEADLINE_SIZE}", "kB/s",
                      f"geometric mean over the algorithms at {HEADLINE_SIZE}-byte blocks, one core"),
               Metric(f"geomean_{HEADLINE_SIZE}_mt", "kB/s",
                      f"geometric mean over the algorithms at {HEADLINE_SIZE}-byte blocks, all cores (-multi)")]
    for multi in (False, True):
        for alg in ALGORITHMS:
            for size in ALL_SIZES:
                where = "all cores (-multi)" if multi else "one core"
                metrics.append(Metric(metric_name(alg, size, multi), "kB/s", f"{alg}, {size}-byte blocks, {where}"))
                if alg in NOEVP_PATHS:
                    metrics.append(Metric(metric_name(alg, size, multi, "noevp"), "kB/s",
                                          f"{alg}, {size}-byte blocks, {where}, without -evp "
                                          f"({NOEVP_PATHS[alg]})"))
    return tuple(metrics)


class OpensslSpeed(Workload):
    spec = WorkloadSpec(
        name="openssl-speed",
        category="crypto",
        description="openssl speed -evp: hashes and ciphers over block sizes 16..16384, one core and all cores; "
                    "with forms = [\"evp\", \"noevp\"] also without -evp, as the write-ups ran it",
        metrics=_speed_metrics(),
        headline=f"geomean_{HEADLINE_SIZE}",
        reproduces="C: ARM vs Intel cloud, openssl speed -multi",
        timing="openssl's own: bytes per second of its user CPU time (its default without -elapsed), one process "
               "per core with -multi",
    )
    tools = (Tool("openssl", "openssl"),)
    quick = {"algorithms": ["sha1", "sha256", "aes-128-cbc", "chacha20-poly1305"], "sizes": [HEADLINE_SIZE],
             "multi": False}

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"algorithms": list(ALGORITHMS), "sizes": list(ALL_SIZES), "seconds": 1,
                "multi": True, "threads": facts.cores or 1, "forms": ["evp"]}

    def prepare(self, ctx: Context) -> Prepared:
        target = ctx.target
        version = tool_version(target, ["openssl", "version"])
        major = _major(version)
        unknown = sorted(set(ctx.params["algorithms"]) - set(ALGORITHMS))
        if unknown:
            raise WorkloadError(f"openssl-speed: unknown algorithm {unknown[0]!r}", "use: " + ", ".join(ALGORITHMS))
        if bad := sorted(set(ctx.params.get("forms", ["evp"])) - set(FORMS)):
            raise WorkloadError(f"openssl-speed: unknown form {bad[0]!r}",
                                "use: evp (openssl speed -evp ALG), noevp (openssl speed ALG, as the write-ups ran it)")
        usable, missing = [], []
        for alg in ctx.params["algorithms"]:
            (usable if _available(target, alg, major) else missing).append(alg)
        info = target.run(["openssl", "version", "-a"], timeout=60).stdout
        cpuinfo = target.run(["cat", "/proc/cpuinfo"], timeout=60).stdout
        facts = {"algorithms": usable, "unavailable": missing,
                 "hw_paths": hw_paths(info, cpuinfo, dict(target.environment())),
                 "cores": ctx.facts.cores}  # threads = 0: -multi on each machine's own CPUs
        return Prepared(facts=facts, versions={"openssl": version})

    def cpus(self, params: dict[str, Any]) -> int:
        return max(1, int(params.get("threads") or 1)) if params.get("multi") else 1  # -multi N: N processes

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        major = _major(prepared.versions["openssl"])
        sizes = [int(s) for s in params["sizes"]]
        runs = [("1", [])]
        if params.get("multi"):
            # threads 0: as many as this machine has CPUs (the cloud write-up's -multi 16 on 16 vCPUs)
            threads = int(params["threads"]) or int(prepared.facts.get("cores") or 1)
            runs.append(("mt", ["-multi", str(threads)]))
        lines = ["set -e"]
        forms = [f for f in FORMS if f in params.get("forms", ["evp"])]
        for tag, extra in runs:
            for form in forms:
                for alg in prepared.facts["algorithms"]:
                    if form == "noevp" and alg not in NOEVP_PATHS:
                        continue  # AES-GCM and ChaCha20-Poly1305 have no non-EVP test
                    base = ["openssl", "speed", "-elapsed", "-mr", *extra, "-seconds", str(int(params["seconds"]))]
                    if alg in LEGACY and major >= 3:
                        base += ["-provider", "legacy", "-provider", "default"]
                    # the default run covers the six standard sizes; otherwise one run per size
                    per_size = [[]] if sizes == list(ALL_SIZES) else [["-bytes", str(s)] for s in sizes]
                    named = [alg] if form == "noevp" else ["-evp", alg]
                    marker = tag if form == "evp" else f"{tag}-{form}"
                    for size_args in per_size:
                        cmd = " ".join(q(a) for a in [*base, *size_args, *named])
                        lines.append(f"echo 'run {marker} {alg}'; {cmd} 2>&1")
        return ["sh", "-c", "\n".join(lines)]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        values: dict[str, float] = {}
        for (marker, alg), table in parse_speed(result.stdout).items():
            tag, _, form = marker.partition("-")
            for size, kbps in table.items():
                if kbps > 0:  # 0.00: openssl could not run it (a provider missing), not a speed
                    values[metric_name(alg, size, tag == "mt", form or "evp")] = kbps
        wanted = [metric_name(a, int(s), m) for a in params["algorithms"] for s in params["sizes"]
                  for m in ((False, True) if params.get("multi") else (False,))]
        if not any(w in values for w in wanted):
            raise WorkloadError(f"openssl speed printed no results (last line: {result.last_line()!r})",
                                "run openssl speed -mr -evp sha256 by hand")
        for multi, suffix in ((False, ""), (True, "_mt")):
            heads = [values.get(metric_name(a, HEADLINE_SIZE, multi)) for a in params["algorithms"]]
            # over the same algorithms on every side, or not at all (a missing legacy provider)
            if heads and all(heads):
                values[f"geomean_{HEADLINE_SIZE}{suffix}"] = geometric_mean(heads)
        return values

    def calibrate(self, ctx: Context, prepared: Prepared) -> dict[str, Any]:
        """Keep the algorithms the first configuration can run; the others are in its facts."""
        return {**ctx.params, "algorithms": list(prepared.facts["algorithms"])}


def _major(version: str) -> int:
    """'OpenSSL 3.0.19 27 Jan 2026' -> 3; 'OpenSSL 1.1.1w ...' -> 1."""
    parts = version.split()
    try:
        return int(parts[1].split(".")[0])
    except (IndexError, ValueError):
        return 0


def _available(target: Target, alg: str, major: int) -> bool:
    """Whether this openssl can run alg (bf-cbc needs OpenSSL 3's legacy provider)."""
    if alg not in LEGACY:
        return True
    argv = ["openssl", "enc", "-e", f"-{alg}", "-K", "00112233445566778899aabbccddeeff",
            "-iv", "0011223344556677", "-in", "/dev/null", "-out", "/dev/null"]
    if major >= 3:
        argv += ["-provider", "legacy", "-provider", "default"]
    return target.run(argv, timeout=60).exit_status == 0


# -- sha1-sparse -------------------------------------------------------------------------------

@lru_cache(maxsize=4)
def zeros_sha1(size: int) -> str:
    """SHA-1 of `size` zero bytes, what both tools must print for the sparse file."""
    digest = hashlib.sha1()
    block = memoryview(bytes(1 << 20))
    for start in range(0, size, len(block)):
        digest.update(block[: min(len(block), size - start)])
    return digest.hexdigest()


class Sha1Sparse(Workload):
    spec = WorkloadSpec(
        name="sha1-sparse",
        category="crypto",
        description="SHA-1 of a sparse file of `size` bytes on tmpfs (no I/O) with the userspace's sha1sum and openssl sha1",
        metrics=(Metric("sha1sum_mbps", "MB/s", "coreutils sha1sum over the sparse file (per CPU second)"),
                 Metric("openssl_mbps", "MB/s", "openssl sha1 over the sparse file (per CPU second)")),
        headline="sha1sum_mbps",
        reproduces="A: SHA-1 of a 2 GB sparse file on the Pi 4, 32-bit vs 64-bit",
        timing="each tool's CPU time (user + sys, bash's time): one thread hashing pages of zeros from tmpfs; "
               "time slices other programs take while it waits do not count against it",
    )
    tools = (Tool("sha1sum", "coreutils"), Tool("openssl", "openssl"), Tool("truncate", "coreutils"),
             Tool("bash", "bash"))
    suites = ("native",)
    quick = {"size": 20_000_000}

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        # A rate, the same from 50 MB as from the write-up's 2 GB (rpi64 --size writeup). Short
        # trials cost less for the same verdict: the paired spread does not shrink with a longer
        # trial, as this VM's slow spells last longer than one (sd of neighbouring sha1sum trials'
        # log ratio 0.13-0.17 from 33 MB to 495 MB: benchmarks/results/cpu-spells.txt), so the time
        # to a verdict follows the trial's length. On a 2-core VM with one CPU reserved,
        # sha1-sparse alone reached its verdict in a median 55 s at 100 MB against 96 s at 500 MB
        # (4 runs each). At 50 MB sha1sum hashes for 0.08-0.15 s on a fast core (0.2 s on a
        # Pi 4), where bash's millisecond clock is under 1.5% of it.
        return {"size": 50_000_000}

    def prepare(self, ctx: Context) -> Prepared:
        size = int(ctx.params["size"])
        path = f"{ctx.workdir()}/sparse-{size}"
        # a hole, so reading it costs no I/O and no memory on tmpfs
        run_checked(ctx.target, ["truncate", "-s", str(size), path], "sha1-sparse: truncate")
        versions = {"sha1sum": tool_version(ctx.target, ["sha1sum", "--version"]),
                    "openssl": tool_version(ctx.target, ["openssl", "version"])}
        return Prepared(files={"sparse": path}, facts={"input_sha1": zeros_sha1(size), "input_bytes": size},
                        versions=versions)

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        path = q(prepared.files["sparse"])
        # bash's `time` prints each tool's CPU time (its rusage, to the millisecond) where the
        # tool's own stderr stays stderr: fd 3 is stdout, fd 4 stderr.
        lines = ["set -e", "exec 3>&1 4>&2"]
        for name, command in (("sha1sum", f"sha1sum {path}"), ("openssl", f"openssl sha1 -r {path}")):
            lines += [f"TIMEFORMAT='cpu {name} %3U %3S'", f"{{ time {command} 2>&4; }} 2>&3"]
        return ["bash", "-c", "\n".join(lines)]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        """Rates from each tool's CPU time (user + sys), as the native kernels time themselves:
        hashing is one busy thread, so other processes' time slices do not count against it."""
        size = int(params["size"])
        seconds = {m[1]: float(m[2]) + float(m[3]) for line in result.stdout.splitlines()
                   if (m := _CPU.match(line.strip()))}
        digests = [line.split()[0] for line in result.stdout.splitlines()
                   if line and not _CPU.match(line.strip())]
        expected = zeros_sha1(size)
        if len(digests) != 2 or any(d != expected for d in digests):
            raise WorkloadError(f"sha1-sparse: wrong digests {digests} (expected {expected})",
                                "sha1sum or openssl misread the sparse file")
        if missing := [t for t in ("sha1sum", "openssl") if not seconds.get(t, 0) > 0]:
            raise WorkloadError(f"sha1-sparse: no CPU time for {missing[0]} (last line: {result.last_line()!r})",
                                "run the trial's bash script by hand")
        return {"sha1sum_mbps": size / 1e6 / seconds["sha1sum"], "openssl_mbps": size / 1e6 / seconds["openssl"]}


WORKLOADS = (OpensslSpeed, Sha1Sparse)
