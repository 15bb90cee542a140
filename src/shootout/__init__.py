"""shootout: compare machine configurations with paired, randomized benchmark rounds."""

__version__ = "0.1.0"
