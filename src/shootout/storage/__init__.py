"""Storage under test: where disk workloads write (scratch areas, block devices, trim)."""
