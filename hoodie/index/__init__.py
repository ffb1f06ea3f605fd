"""Indexes: tagging records with their file groups, and placing their new versions."""

from ..config import BUCKET_INDEX, GLOBAL_SIMPLE_INDEX, WriteConfig
from .base import HoodieIndex
from .bucket import BucketIndex
from .global_index import GlobalIndex
from .simple import SimpleIndex


def index_for(config: WriteConfig) -> HoodieIndex:
    """The index `hoodie.index.type` names."""
    if config.index_type == BUCKET_INDEX:
        return BucketIndex.of(config)
    if config.index_type == GLOBAL_SIMPLE_INDEX:
        return GlobalIndex.simple(config)
    return SimpleIndex()


__all__ = ["BucketIndex", "GlobalIndex", "HoodieIndex", "SimpleIndex", "index_for"]
