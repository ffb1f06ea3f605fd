"""Indexes: tagging records with their file groups, and placing their new versions."""

from ..config import (
    BLOOM_INDEX,
    BUCKET_INDEX,
    GLOBAL_BLOOM_INDEX,
    GLOBAL_SIMPLE_INDEX,
    WriteConfig,
)
from .base import HoodieIndex
from .bloom import BloomIndex
from .bucket import BucketIndex
from .global_index import GlobalIndex
from .simple import SimpleIndex


def index_for(config: WriteConfig) -> HoodieIndex:
    """The index `hoodie.index.type` names."""
    if config.index_type == BUCKET_INDEX:
        return BucketIndex.of(config)
    if config.index_type == BLOOM_INDEX:
        return BloomIndex()
    if config.index_type == GLOBAL_SIMPLE_INDEX:
        return GlobalIndex.simple(config)
    if config.index_type == GLOBAL_BLOOM_INDEX:
        return GlobalIndex.bloom(config)
    return SimpleIndex()


__all__ = ["BloomIndex", "BucketIndex", "GlobalIndex", "HoodieIndex", "SimpleIndex", "index_for"]
