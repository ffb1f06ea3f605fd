"""The FACT workload: one table, upsert batches skewed toward recent partitions, then deletes.

Modelled on Onehouse's lake-loader "FACT" tables, where most changes land in the newest
partitions (late-arriving facts, corrections of recent orders) but old partitions still get
the odd update:

- an initial table of `rows` rows, 21 columns of mixed types, partitioned by `event_date`
  over 30 days (ids are assigned in date order, as a fact table's keys grow with time);
- `batches` upsert batches of `rows / 10` rows each: half updates of existing keys, half new
  keys. An update's partition is drawn from a Zipf law over partition age (the newest day is
  rank 1, `P(rank r) ~ r ** -ZIPF_S`), then the key uniformly among that day's live keys, with
  no key twice in a batch. Inserts go to the `RECENT_INSERT_PARTITIONS` newest days, with the
  same skew. Updates keep a row's date: the partition is part of the key for every system;
- one delete batch of `rows / 100` keys, drawn uniformly from all live keys (deletes such as
  GDPR requests hit old and new data alike).

Everything is drawn from one seeded numpy Generator, in a fixed order, so the same
`(rows, batches, seed)` always writes the same files. The data is written once per run as
parquet and every system reads those files: all of them see byte-identical input.

After the writes every system answers the same reads: a point read of `point_key` (a key the
1% update changed) and a 1%-selective filter, `score > FILTER_ABOVE`; their expected rows are
computed here as well (`expected_point`, `expected_filter`).

The expected final table is computed here from the generated data alone (`expected_state`),
and `checksum` reduces any table to a row count and an order-independent hash over the key and
a few columns of different types, so each system's result is compared with the same oracle.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

PARTITIONS = 30  # the default; `generate(partitions=...)` (the smoke test uses fewer)
BASE_DATE = dt.date(2024, 1, 1)
ZIPF_S = 1.2  # skew of updates and inserts toward recent partitions
SPREADS = ("zipf", "even")  # `generate(spread=...)`: the FACT skew, or every partition alike
RECENT_INSERT_PARTITIONS = 3
BASE_TS = 1_700_000_000_000  # `ts` (the precombine field) of step s is BASE_TS + s * STEP_TS + i
STEP_TS = 10_000_000_000
ROWS_PER_INPUT_FILE = 250_000  # input files are split so Spark reads them with several tasks
EPOCH = dt.date(1970, 1, 1)
DAY_US = 86_400_000_000

KEY = "id"
PARTITION_COLUMN = "event_date"
PRECOMBINE = "ts"
# The columns `checksum` hashes: the key, the partition, the precombine field and one column
# of each other kind (decimal, string, timestamp, boolean, nullable string).
CHECK_COLUMNS = ["id", "event_date", "ts", "amount", "status", "updated_at", "is_returned"]
CHECK_COLUMNS += ["comment"]
# The 1%-selective filter: `score > FILTER_ABOVE`. `score` is drawn anew by every write of a row
# (normal, mean 50, sd 15: P(score > 84.9) = 1.0%), so a reader that filtered a merge-on-read
# table's base file before merging its logs would return stale rows, and fail the check.
FILTER_COLUMN = "score"
FILTER_ABOVE = 84.9
ORACLE_COLUMNS = [*CHECK_COLUMNS, FILTER_COLUMN]

STATUSES = ["placed", "paid", "packed", "shipped", "delivered", "returned", "cancelled"]
CHANNELS = ["web", "app", "store", "phone", "partner"]
COUNTRIES = ["US", "DE", "FR", "GB", "IN", "BR", "JP", "NL", "ES", "IT", "CA", "MX"]
WORDS = ["late", "gift", "fragile", "express", "bulk", "repeat", "vip", "promo", "damaged", "ok"]

SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("event_date", pa.date32()),
        ("ts", pa.int64()),
        ("created_at", pa.timestamp("us", tz="UTC")),
        ("updated_at", pa.timestamp("us", tz="UTC")),
        ("customer_id", pa.int64()),
        ("product_id", pa.int32()),
        ("store_id", pa.int32()),
        ("country", pa.string()),
        ("channel", pa.string()),
        ("line_number", pa.int32()),
        ("quantity", pa.int32()),
        ("unit_price", pa.decimal128(10, 2)),
        ("amount", pa.decimal128(12, 2)),
        ("discount", pa.float64()),
        ("tax", pa.float64()),
        ("score", pa.float64()),
        ("status", pa.string()),
        ("comment", pa.string()),
        ("is_returned", pa.bool_()),
        ("is_promo", pa.bool_()),
        ("ship_date", pa.date32()),
    ]
)


@dataclass(frozen=True)
class Step:
    """One write of the run: the initial load, an upsert batch or the delete batch."""

    name: str  # "load", "upsert_1", ..., "delete"
    kind: str  # "create", "upsert" or "delete"
    files: list[str]
    rows: int
    updates: int = 0
    inserts: int = 0
    partitions_touched: int = 0

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Workload:
    rows: int
    batches: int
    seed: int
    partitions: int
    steps: list[Step]
    expected_rows: int
    expected_checksum: str
    query_date: str  # the partition the one-partition query reads (the newest day)
    expected_query_rows: int
    generate_seconds: float = 0.0
    # the point read's key: one the 1% update changed (a log record in merge-on-read tables)
    point_key: int = -1
    expected_point: dict = field(default_factory=dict)  # `checksum` of its row
    filter_column: str = FILTER_COLUMN
    filter_above: float = FILTER_ABOVE
    expected_filter: dict = field(default_factory=dict)  # `checksum` of the filter's rows
    spread: str = "zipf"  # how the upsert batches spread over partitions (SPREADS)

    def to_dict(self) -> dict:
        out = dict(self.__dict__)
        out["steps"] = [s.to_dict() for s in self.steps]
        out["zipf_s"] = ZIPF_S
        out["spread"] = self.spread
        out["columns"] = len(SCHEMA)
        return out

    @classmethod
    def from_dict(cls, data: dict) -> Workload:
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["steps"] = [Step(**s) for s in data["steps"]]
        return cls(**fields)


# -- values ---------------------------------------------------------------------------------------
def _mix(ids: np.ndarray) -> np.ndarray:
    """splitmix64 of each id: the attributes that never change are functions of the key."""
    z = ids.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _decimal(unscaled: np.ndarray, precision: int, scale: int) -> pa.Array:
    """A decimal128 array from int64 unscaled values, without Python Decimal objects."""
    words = np.empty((len(unscaled), 2), dtype=np.int64)
    words[:, 0] = unscaled
    words[:, 1] = np.where(unscaled < 0, -1, 0)  # two's complement sign extension
    return pa.Array.from_buffers(
        pa.decimal128(precision, scale), len(unscaled), [None, pa.py_buffer(words.tobytes())]
    )


def _pick(values: list[str], index: np.ndarray) -> pa.Array:
    return pc.take(pa.array(values, pa.string()), pa.array(index.astype(np.int64)))


def make_rows(ids: np.ndarray, parts: np.ndarray, step: int, rng: np.random.Generator) -> pa.Table:
    """The rows of `ids` (in partitions `parts`) as written by `step` (0 = the initial load).

    Key-derived columns (customer, product, store, country, channel, created_at) are the same
    in every version of a row; the others are drawn anew, so an update changes the row.
    """
    n = len(ids)
    h = _mix(ids)
    days = (BASE_DATE - EPOCH).days + parts.astype(np.int32)
    created = days.astype(np.int64) * DAY_US + (h % np.uint64(DAY_US)).astype(np.int64)
    updated = created + step * 3_600_000_000 + rng.integers(0, 3_600_000_000, n)
    quantity = rng.integers(1, 20, n).astype(np.int32)
    price_cents = rng.integers(99, 250_000, n)
    discount = np.round(rng.random(n) * 0.3, 4)
    amount_cents = price_cents * quantity
    comment_index = rng.integers(0, len(WORDS) * len(WORDS), n)
    comment_null = rng.random(n) < 0.2
    comments = [f"{a} {b}" for a in WORDS for b in WORDS]
    columns = {
        "id": pa.array(ids.astype(np.int64)),
        "event_date": pa.array(days, pa.int32()).cast(pa.date32()),
        "ts": pa.array(BASE_TS + step * STEP_TS + np.arange(n, dtype=np.int64)),
        "created_at": pa.array(created).cast(pa.timestamp("us", tz="UTC")),
        "updated_at": pa.array(updated).cast(pa.timestamp("us", tz="UTC")),
        "customer_id": pa.array(((h >> np.uint64(17)) % np.uint64(5_000_000)).astype(np.int64)),
        "product_id": pa.array(((h >> np.uint64(23)) % np.uint64(100_000)).astype(np.int32)),
        "store_id": pa.array(((h >> np.uint64(41)) % np.uint64(2_000)).astype(np.int32)),
        "country": _pick(COUNTRIES, (h >> np.uint64(7)) % np.uint64(len(COUNTRIES))),
        "channel": _pick(CHANNELS, (h >> np.uint64(13)) % np.uint64(len(CHANNELS))),
        "line_number": pa.array(((h >> np.uint64(3)) % np.uint64(8)).astype(np.int32) + 1),
        "quantity": pa.array(quantity),
        "unit_price": _decimal(price_cents, 10, 2),
        "amount": _decimal(amount_cents, 12, 2),
        "discount": pa.array(discount, mask=rng.random(n) < 0.1),
        "tax": pa.array(np.round(amount_cents * 0.0008, 2)),
        "score": pa.array(rng.normal(50.0, 15.0, n)),
        "status": _pick(STATUSES, rng.integers(0, len(STATUSES), n)),
        "comment": pc.if_else(
            pa.array(comment_null), pa.nulls(n, pa.string()), _pick(comments, comment_index)
        ),
        "is_returned": pa.array(rng.random(n) < 0.05),
        "is_promo": pa.array(rng.random(n) < 0.2),
        "ship_date": pa.array(days + rng.integers(0, 7, n).astype(np.int32)).cast(pa.date32()),
    }
    return pa.table(columns, schema=SCHEMA)


def zipf_weights(count: int) -> np.ndarray:
    """P(rank r) ~ r^-ZIPF_S for r = 1..count: index 0 is the OLDEST partition, last the newest."""
    ranks = np.arange(count, 0, -1, dtype=np.float64)
    weights = ranks**-ZIPF_S
    return weights / weights.sum()


def partition_date(part: int) -> str:
    return (BASE_DATE + dt.timedelta(days=int(part))).isoformat()


# -- generation -----------------------------------------------------------------------------------
def _write(table: pa.Table, folder: Path) -> list[str]:
    """`table` as parquet files of at most ROWS_PER_INPUT_FILE rows (at least two files)."""
    folder.mkdir(parents=True, exist_ok=True)
    count = max(2, math.ceil(table.num_rows / ROWS_PER_INPUT_FILE))
    size = math.ceil(table.num_rows / count) or 1
    files = []
    for index, start in enumerate(range(0, max(table.num_rows, 1), size)):
        path = folder / f"part-{index:04d}.parquet"
        pq.write_table(table.slice(start, size), path, compression="snappy")
        files.append(str(path))
    return files


def generate(
    rows: int,
    batches: int,
    seed: int,
    data_dir: Path,
    partitions: int = PARTITIONS,
    spread: str = "zipf",
) -> Workload:
    """Draw the whole run, write its input files under `data_dir` and compute the oracle.
    `spread` (SPREADS): "zipf", the FACT skew above; "even", every upsert batch's updates and
    inserts drawn uniformly over every partition (a dimension table's changes, the worst case
    for copy-on-write: every file gets as many as any other)."""
    import time

    started = time.perf_counter()
    if partitions < 1 or rows < 10 * partitions:
        raise ValueError(f"need at least one partition and 10 rows per partition ({rows=})")
    if spread not in SPREADS:
        raise ValueError(f"spread {spread!r}: one of {', '.join(SPREADS)}")
    rng = np.random.default_rng(seed)
    data_dir.mkdir(parents=True, exist_ok=True)
    steps: list[Step] = []

    # initial load: ids 0..rows-1 in date order, over `partitions` days
    ids = np.arange(rows, dtype=np.int64)
    parts = (ids * partitions) // rows
    live = [ids[parts == p] for p in range(partitions)]
    order = rng.permutation(rows)
    initial = make_rows(ids[order], parts[order], 0, rng)
    files = _write(initial, data_dir / "load")
    steps.append(Step("load", "create", files, rows, inserts=rows, partitions_touched=partitions))
    expected = initial.select(ORACLE_COLUMNS)
    del initial

    next_id = rows
    batch_rows = rows // 10
    update_weights = zipf_weights(partitions)
    recent_count = min(RECENT_INSERT_PARTITIONS, partitions)
    insert_weights = zipf_weights(recent_count)
    recent = np.arange(partitions - recent_count, partitions)
    if spread == "even":
        update_weights = np.full(partitions, 1 / partitions)
        recent = np.arange(partitions)
        insert_weights = np.full(partitions, 1 / partitions)
    for number in range(1, batches + 1):
        wanted = rng.multinomial(batch_rows // 2, update_weights)
        upd_ids, upd_parts = [], []
        for p in range(partitions):
            take = min(int(wanted[p]), len(live[p]))
            if take:
                upd_ids.append(rng.choice(live[p], take, replace=False))
                upd_parts.append(np.full(take, p))
        upd_ids = np.concatenate(upd_ids)
        upd_parts = np.concatenate(upd_parts)
        inserts = batch_rows - len(upd_ids)
        ins_ids = np.arange(next_id, next_id + inserts, dtype=np.int64)
        ins_parts = rng.choice(recent, inserts, p=insert_weights)
        next_id += inserts
        for p in recent:
            live[p] = np.concatenate([live[p], ins_ids[ins_parts == p]])
        all_ids = np.concatenate([upd_ids, ins_ids])
        all_parts = np.concatenate([upd_parts, ins_parts])
        order = rng.permutation(len(all_ids))
        batch = make_rows(all_ids[order], all_parts[order], number, rng)
        files = _write(batch, data_dir / f"upsert_{number}")
        steps.append(
            Step(
                f"upsert_{number}",
                "upsert",
                files,
                len(all_ids),
                updates=len(upd_ids),
                inserts=inserts,
                partitions_touched=len(np.unique(all_parts)),
            )
        )
        keep = pc.invert(pc.is_in(expected["id"], pa.array(all_ids)))
        expected = pa.concat_tables([expected.filter(keep), batch.select(ORACLE_COLUMNS)])

    live_ids = np.concatenate(live)
    live_parts = np.concatenate([np.full(len(live[p]), p) for p in range(partitions)])

    # a 1% update, uniform over every live key (corrections reach old data too): what
    # merge-on-read exists for, issue 17's "1% update" step
    chosen = rng.choice(len(live_ids), rows // 100, replace=False)
    upd_ids, upd_parts = live_ids[chosen], live_parts[chosen]
    batch = make_rows(upd_ids, upd_parts, batches + 1, rng)
    files = _write(batch, data_dir / "update_1pct")
    steps.append(
        Step(
            "update_1pct",
            "upsert",
            files,
            len(upd_ids),
            updates=len(upd_ids),
            partitions_touched=len(np.unique(upd_parts)),
        )
    )
    keep = pc.invert(pc.is_in(expected["id"], pa.array(upd_ids)))
    expected = pa.concat_tables([expected.filter(keep), batch.select(ORACLE_COLUMNS)])
    updated_1pct = upd_ids

    # deletes: uniform over every live key
    chosen = rng.choice(len(live_ids), rows // 100, replace=False)
    del_ids, del_parts = live_ids[chosen], live_parts[chosen]
    days = (BASE_DATE - EPOCH).days + del_parts.astype(np.int32)
    deletes = pa.table(
        {"id": pa.array(del_ids), "event_date": pa.array(days, pa.int32()).cast(pa.date32())}
    )
    files = _write(deletes, data_dir / "delete")
    steps.append(
        Step("delete", "delete", files, len(del_ids), partitions_touched=len(set(del_parts)))
    )
    expected = expected.filter(pc.invert(pc.is_in(expected["id"], pa.array(del_ids))))

    deleted = set(del_ids.tolist())
    kept = [k for k in updated_1pct.tolist() if k not in deleted]
    point_key = kept[0] if kept else int(expected["id"][0].as_py())
    point_row = expected.filter(pc.equal(expected["id"], pa.scalar(point_key, pa.int64())))
    filtered = expected.filter(pc.greater(expected[FILTER_COLUMN], pa.scalar(FILTER_ABOVE)))
    query_date = partition_date(partitions - 1)
    in_query = pc.equal(expected["event_date"], pa.scalar(BASE_DATE + dt.timedelta(partitions - 1)))
    check = checksum(expected)
    workload = Workload(
        rows=rows,
        batches=batches,
        seed=seed,
        partitions=partitions,
        steps=steps,
        expected_rows=check["rows"],
        expected_checksum=check["checksum"],
        query_date=query_date,
        expected_query_rows=int(pc.sum(in_query).as_py() or 0),
        generate_seconds=round(time.perf_counter() - started, 3),
        point_key=point_key,
        expected_point=checksum(point_row),
        expected_filter=checksum(filtered),
        spread=spread,
    )
    (data_dir / "workload.json").write_text(json.dumps(workload.to_dict(), indent=2) + "\n")
    return workload


# -- the oracle -----------------------------------------------------------------------------------
def _canonical(column: pa.ChunkedArray, name: str):
    """One column in a form every system's output maps to identically (numpy int64 or str).

    Systems differ in representation, not value: Spark returns `string` where delta-rs returns
    `large_string`, a parquet partition column may come back as text, timestamps may carry or
    drop the UTC zone. Decimals are compared as integer cents.
    """
    kind = column.type
    if name == "event_date":
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            column = column.cast(pa.string()).cast(pa.date32())
        return column.cast(pa.date32()).cast(pa.int32()).to_numpy().astype(np.int64)
    if pa.types.is_timestamp(kind):
        return column.cast(pa.timestamp("us", tz=kind.tz)).cast(pa.int64()).to_numpy()
    if pa.types.is_decimal(kind):
        cents = pc.round(pc.multiply(column.cast(pa.float64()), 100.0))
        return cents.cast(pa.int64()).to_numpy()
    if pa.types.is_boolean(kind):
        return column.cast(pa.int64()).to_numpy()
    if pa.types.is_integer(kind):
        return column.cast(pa.int64()).to_numpy()
    text = column.cast(pa.large_string()).fill_null("\x00null")
    return text.to_numpy(zero_copy_only=False).astype(object)


def checksum(table: pa.Table) -> dict:
    """Row count, distinct keys and a 64-bit hash that ignores row order.

    Each row hashes (pandas' stable hash of the canonical columns); the checksum is their sum
    modulo 2**64, so two tables agree only if they hold the same multiset of rows.
    """
    import pandas as pd

    table = table.select(CHECK_COLUMNS)
    if table.num_rows == 0:
        return {"rows": 0, "distinct_ids": 0, "checksum": f"{0:016x}"}
    frame = pd.DataFrame({name: _canonical(table[name], name) for name in CHECK_COLUMNS})
    hashes = pd.util.hash_pandas_object(frame, index=False).to_numpy(np.uint64)
    total = int(hashes.sum(dtype=np.uint64))
    return {
        "rows": table.num_rows,
        "distinct_ids": int(pc.count_distinct(table["id"]).as_py()),
        "checksum": f"{total:016x}",
    }
