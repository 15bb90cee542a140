"""Lowest layer: frozen records, units, errors and paths that everything else uses. No I/O."""
