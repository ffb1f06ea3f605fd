"""Indexes: tagging records with their file groups, and placing their new versions."""

from ..config import (
    BLOOM_INDEX,
    BUCKET_INDEX,
    GLOBAL_BLOOM_INDEX,
    GLOBAL_SIMPLE_INDEX,
    RECORD_INDEX_TYPE,
    WriteConfig,
)
from .base import HoodieIndex
from .bloom import BloomIndex
from .bucket import BucketIndex
from .global_index import GlobalIndex
from .record_index import RecordIndex
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
    if config.index_type == RECORD_INDEX_TYPE:
        return RecordIndex.of(config)
    return SimpleIndex()


__all__ = [
    "BloomIndex",
    "BucketIndex",
    "GlobalIndex",
    "HoodieIndex",
    "RecordIndex",
    "SimpleIndex",
    "index_for",
]
