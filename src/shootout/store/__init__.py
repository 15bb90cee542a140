"""The results store: runs and raw trials in SQLite (default) or any SQLAlchemy database."""

from shootout.store.database import Store
from shootout.store.results import RESULTS_FORMAT, RESULTS_FORMAT_VERSION
from shootout.store.serialize import (
    run_from_dict,
    run_to_dict,
    trial_from_dict,
    trial_to_dict,
)

__all__ = [
    "RESULTS_FORMAT",
    "RESULTS_FORMAT_VERSION",
    "Store",
    "run_from_dict",
    "run_to_dict",
    "trial_from_dict",
    "trial_to_dict",
]
