"""The batch runner of the pipeline: the shared thread pool of :mod:`zarrbolt._threads` (a module
below both the pipeline and the codecs, so that codecs such as sharding can split their work
without importing the pipeline).  Tunables such as ``BATCHES_PER_THREAD`` live there."""

from .._threads import batch_bounds, parallel_workers, run_batches

__all__ = ["batch_bounds", "parallel_workers", "run_batches"]
