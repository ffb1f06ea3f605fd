"""Indexes: tagging records with their file groups, and placing their new versions."""

from ..config import BUCKET_INDEX, WriteConfig
from .base import HoodieIndex
from .bucket import BucketIndex
from .simple import SimpleIndex


def index_for(config: WriteConfig) -> HoodieIndex:
    """The index `hoodie.index.type` names."""
    if config.index_type == BUCKET_INDEX:
        return BucketIndex.of(config)
    return SimpleIndex()


__all__ = ["BucketIndex", "HoodieIndex", "SimpleIndex", "index_for"]
