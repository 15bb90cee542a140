"""What each brought side is (an image:, a rootfs:): its system, where its root was found, and
the checksum of the image it came from, said beside the verdicts, since its label is only a
file name."""

from __future__ import annotations

from shootout.judge.analysis import Analysis

TITLE = "The systems compared"


def side_lines(analysis: Analysis) -> list[str]:
    lines = []
    for config in analysis.configs:
        facts = analysis.facts.target(config.name)
        brought = facts.get("brought")
        if not isinstance(brought, dict):
            continue
        system = (facts.get("os_release") or {}).get("PRETTY_NAME") or "an unnamed Linux system"
        part = brought.get("partition") or {}
        where = (f"partition {part['number']} ({part.get('fstype') or '?'}), by {brought.get('how')}"
                 if part.get("number") is not None else f"{brought.get('how')}")
        digest = f", sha256 {brought['sha256'][:16]}…" if brought.get("sha256") else ""
        lines.append(f"{config.display}: {system}, {facts.get('arch') or '?'}, from {brought.get('kind')} "
                     f"{brought.get('source')}: root {where}{digest}; read-only under an overlay")
    return lines
