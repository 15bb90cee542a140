"""What a named experiment is, and the paragraph that sets its results beside the write-up's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shootout.configs import FileSettings, load_text

if TYPE_CHECKING:
    from shootout.analysis import Analysis


@dataclass(frozen=True)
class Experiment:
    name: str
    description: str
    reproduces: str  # the write-up, as EXPERIMENTS.md names it
    toml: str  # [run], [[config]], [[workload]] and [params.WORKLOAD] tables, as in shootout.toml
    # workload -> what the write-up found for it, shown beside the measured result
    found: dict[str, str] = field(default_factory=dict)
    # a paragraph of its own instead of the one-line-per-workload comparison (optional)
    explainer: Callable[[Analysis], list[str]] | None = None

    def settings(self) -> FileSettings:
        return load_text(self.toml, f"experiment {self.name}")

    def explain(self, analysis: Analysis) -> list[str]:
        """Lines for the report: each headline result beside what the write-up found."""
        if self.explainer is not None:
            return self.explainer(analysis)
        from shootout.report.text import fmt_estimate

        by_id = {c.name: c.display for c in analysis.configs}
        lines = [f"{self.name}: {self.reproduces}"]
        for comp in analysis.comparisons:
            if not comp.headline:
                continue
            found = self.found.get(comp.workload)
            measured = f"{by_id[comp.config]} vs {by_id[comp.baseline]}: {fmt_estimate(comp.estimate)}, {comp.verdict}"
            lines.append(f"{comp.workload}: {measured}" + (f"; the write-up: {found}" if found else ""))
        return lines
