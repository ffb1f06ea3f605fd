"""Our column stats of every live file of tables Apache Hudi wrote vs Apache Hudi's records.

    PYTHONPATH=$PWD python docs/design/column-stats/compare_probe.py <root> <table>...

Base files: `ranges_from_parquet(footer, columns_to_index(schema, version))`; log files:
`ranges_from_table(rows of its data blocks, ...)`; compared with `column_stats_of` for min,
max (kind, type, -0.0 and NaN told apart), counts, sizes and the set of columns. Ran
2026-11-28 on the probe tables of 0.15 and 1.2 (cow and mor, the writes of
mdt-samples-style inserts, upserts and a delete): every column of every live file equal
(base 80+48+70+42, log 80+70), and on order_probe.py's tables: equal but for the column whose
footer (parquet-mr's) has a NaN max, which we leave out (Apache Hudi records min/max 0.0).
"""

import math
import sys

import pyarrow as pa
import pyarrow.parquet as pq

from hoodie.column_stats import columns_to_index, ranges_from_parquet, ranges_from_table
from hoodie.logformat import read_log_file
from hoodie.meta_client import HoodieTableMetaClient
from hoodie.table_metadata import TableMetadata

ROOT = sys.argv[1]
FIELDS = (
    "min_value",
    "max_value",
    "value_count",
    "null_count",
    "total_size",
    "total_uncompressed_size",
)


def same(a, b):
    if a is None or b is None:
        return a is b
    if a.kind is not b.kind:
        return False
    x, y = a.value, b.value
    if isinstance(x, float):
        return (math.isnan(x) and math.isnan(y)) or (
            x == y and math.copysign(1, x) == math.copysign(1, y)
        )
    return type(x) is type(y) and x == y


def compare(kind, name, ours, theirs, totals, notes):
    ours = {r.column: r for r in ours}
    theirs = {col: rec for (_, _, col), rec in theirs.items()}
    if set(ours) != set(theirs):
        notes.append(
            f"{kind} {name}: columns differ: ours-only {sorted(set(ours) - set(theirs))} hudi-only {sorted(set(theirs) - set(ours))}"
        )
    for col in sorted(set(ours) & set(theirs)):
        o, t = ours[col], theirs[col]
        bad = [
            f
            for f in FIELDS
            if not (
                same(getattr(o, f), getattr(t, f))
                if f.endswith("value")
                else getattr(o, f) == getattr(t, f)
            )
        ]
        totals[kind][0 if not bad else 1] += 1
        for f in bad:
            notes.append(f"{kind} {name} {col} {f}: ours {getattr(o, f)!r} hudi {getattr(t, f)!r}")


for table in sys.argv[2:] or ("t_0.15.0_cow", "t_0.15.0_mor", "t_1.2.0_cow", "t_1.2.0_mor"):
    path = f"{ROOT}/{table}"
    meta = HoodieTableMetaClient.open(path)
    version = meta.properties.table_version
    md = TableMetadata.open(meta)
    totals = {"base": [0, 0], "log": [0, 0]}
    notes = []
    schema = None
    for partition in md.all_partition_paths():
        for name in md.files_in_partition(partition):
            if name.endswith(".parquet"):
                schema = pq.ParquetFile(f"{path}/{partition}/{name}").schema_arrow
    for partition in md.all_partition_paths():
        for name in md.files_in_partition(partition):
            local = f"{path}/{partition}/{name}"
            theirs = md.column_stats_of({partition: [name]}, schema.names)
            if name.endswith(".parquet"):
                file = pq.ParquetFile(local)
                cols = columns_to_index(file.schema_arrow, version)
                ours = ranges_from_parquet(file.metadata, cols)
                compare("base", name, ours, theirs, totals, notes)
            else:
                blocks = [b.records() for b in read_log_file(local) if b.is_data_block]
                rows = pa.concat_tables(blocks) if blocks else schema.empty_table()
                cols = columns_to_index(rows.schema, version)
                ours = ranges_from_table(rows, cols)
                compare("log", name, ours, theirs, totals, notes)
    print(
        f"{table} (table version {version}): base file columns equal {totals['base'][0]}, differing {totals['base'][1]}; "
        f"log file columns equal {totals['log'][0]}, differing {totals['log'][1]}"
    )
    for n in notes:
        print("   ", n)
