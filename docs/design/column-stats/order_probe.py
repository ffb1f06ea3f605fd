"""Which order Apache Hudi takes a log file's min/max of strings, bytes and doubles in.

    PYTHONPATH=$PWD:$PWD/tests python docs/design/column-stats/order_probe.py 1.2.0 /tmp/cs

A merge-on-read table with column stats on: an insert (base file), then an upsert of the same
keys (a log file) holding U+E000 and U+1F600, bytes 0x01 and 0xFF, and a NaN. Ran 2026-11-28,
both versions: the log file's records say min U+E000 / max U+1F600 (UTF-8 order, Avro's
`Utf8`), min 0xFF / max 0x01 (signed bytes), max NaN (`Double.compare`); the base file's (a
footer parquet-mr wrote: min 0.0, max NaN) say min 0.0, max 0.0.
"""

import shutil
import sys

import pyarrow as pa
from apache_hudi import HUDI_1, ApacheHudi, datasource_options

from hoodie.meta_client import HoodieTableMetaClient
from hoodie.table_metadata import TableMetadata


def rows(ids, strs, bins, xs, ts):
    return pa.table(
        {
            "id": pa.array(ids, pa.int32()),
            "dt": pa.array(["a"] * len(ids)),
            "ts": pa.array([ts] * len(ids), pa.int64()),
            "s": pa.array(strs),
            "bn": pa.array(bins, pa.binary()),
            "x": pa.array(xs, pa.float64()),
        }
    )


version = sys.argv[1]
path = f"{sys.argv[2]}/t_{version}"
shutil.rmtree(path, ignore_errors=True)
judge = ApacheHudi(version)
W = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.parquet.small.file.limit": "0",
    "hoodie.compact.inline.max.delta.commits": "20",
    "hoodie.metadata.compact.max.delta.commits": "100",
}
if version == HUDI_1:
    W["hoodie.write.table.version"] = "8"
judge.write(
    path,
    rows([1, 2], ["\ue000", "\U0001f600"], [b"\x01", b"\xff"], [0.0, float("nan")], 1),
    {**datasource_options("p", "mor", "insert"), **W},
)
judge.write(
    path,
    rows([1, 2], ["\ue000", "\U0001f600"], [b"\x01", b"\xff"], [1.0, float("nan")], 2),
    {**datasource_options("p", "mor"), **W},
)
judge.close()
md = TableMetadata.open(HoodieTableMetaClient.open(path))
for r in sorted(
    md.read_partition("column_stats").values(), key=lambda r: (r.file_name, r.column_name)
):
    if r.column_name in ("s", "bn", "x"):
        print(
            version,
            r.file_name,
            r.column_name,
            r.min_value,
            r.max_value,
            r.value_count,
            r.null_count,
        )
