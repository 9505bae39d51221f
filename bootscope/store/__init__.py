"""store stage: experiments, variants, boots, samples and compressed logs in SQLite or PostgreSQL."""

from bootscope.store.db import Store
from bootscope.store.records import BootRecord, ExperimentRecord, ExperimentSummary, VariantRecord

__all__ = ["BootRecord", "ExperimentRecord", "ExperimentSummary", "Store", "VariantRecord"]
