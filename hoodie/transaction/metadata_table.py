"""Turning a table's Apache Hudi metadata table off, as a writer with
`hoodie.metadata.enable=false` does.

Apache Hudi 1.x writes a metadata table by default (`.hoodie/metadata`, announced by
`hoodie.table.metadata.partitions=files,...` in `hoodie.properties`), and its readers (Apache
Hudi's own, hudi-rs, ours; Trino and Athena where configured to) list a table's files through
it instead of listing storage. A writer that does not keep it (`hoodie.metadata.enable=false`,
or one holding partitions we do not write, which `metadata_writer.py` turns off and builds
again) must not leave it behind: a file it writes, compacts, cleans or rolls back would be
missing from it (or still listed in it). So it does first what Apache Hudi does
(`HoodieTable.maybeDeleteMetadataTable`, `HoodieTableMetadataUtil.deleteMetadataTable`): clear
the partitions in `hoodie.properties`, then delete the folder.

That order is what makes it crash-safe: readers use the folder only while the property lists
partitions, so once it is cleared the table reads right whether or not the folder is still
there, and the next action (which finds a folder and no partitions) finishes the delete.
"""

from __future__ import annotations

import logging
import posixpath

from ..faults import crash_point
from ..meta_client import HoodieTableMetaClient
from ..timeline import METAFOLDER

log = logging.getLogger(__name__)

METADATA_TABLE_FOLDER = posixpath.join(METAFOLDER, "metadata")


def turn_off_metadata_table(meta_client: HoodieTableMetaClient, action: str) -> None:
    """Before `action` (a write, compaction, clean, rollback, ...) changes the table: clear the
    metadata table's partitions in `hoodie.properties`, then delete `.hoodie/metadata`. Nothing
    is done (one read of `hoodie.properties`, one look for the folder) where there is none.
    It needs no table lock: writers doing this at once write the same file (each through the
    backup protocol, each rewrite whole) and delete the same folder, and the one other rewrite
    of `hoodie.properties`, an upgrade, refuses to run while any instant is pending."""
    listed = meta_client.clear_metadata_partitions()
    if listed:
        crash_point("metadata_table.property_cleared")
    storage = meta_client.storage
    folder = storage.exists(METADATA_TABLE_FOLDER)
    if listed:
        log.info(
            "table '%s': clearing hoodie.table.metadata.partitions (%s) and deleting %s%s "
            "before this %s, as Apache Hudi does with hoodie.metadata.enable=false: readers "
            "list the table's files without it",
            meta_client.name, ",".join(listed), METADATA_TABLE_FOLDER,
            "" if folder else " (already gone)", action,
        )  # fmt: skip
    elif folder:
        log.info(
            "table '%s': deleting %s before this %s: an earlier action cleared "
            "hoodie.table.metadata.partitions and stopped before deleting the folder",
            meta_client.name, METADATA_TABLE_FOLDER, action,
        )  # fmt: skip
    if folder:
        storage.delete_dir(METADATA_TABLE_FOLDER)
