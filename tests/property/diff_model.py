"""A pure-Python model of one dbt-hoodie table: what every read must return after each step.

No Spark and nothing from `hoodie`: the model restates README.md's rules (and, where README is
silent, Apache Hudi's and hudi-rs's) so that the differential test can hold the core to them.
The rules, numbered as the test's messages cite them:

R1  Identity. A record is (partition path, record key); the same key in two partitions is two
    records (non-global indexes).
R2  Batch precombine. With an ordering (precombine) field `ts`, the rows of one batch that share
    a key reduce to one: the largest `ts` wins, null is smaller than any value, and among equal
    values the later row of the batch wins. A `_hoodie_is_deleted = true` row competes with its
    `ts` like any row, and if it wins the batch deletes the key.
R3  No ordering field. Two rows with one key in a batch are an error
    (`DuplicateRecordKeyError`) and nothing is written; otherwise the incoming row replaces
    (or deletes) the stored one.
R4  Against the stored row (copy-on-write, and any write that rewrites a base file). The batch's
    winner replaces the stored row, or removes it if it is a delete, unless the stored `ts` is
    larger (null smaller than any value; ties go to the incoming row). A delete whose `ts` is
    null has no ordering value and always removes the stored row (Hudi's default). A delete of
    a key the table does not hold does nothing. The delete operation (`HoodieTable.delete`)
    removes its keys whatever their `ts`; naming a key twice is allowed.
R5  Commit time. A record's `_hoodie_commit_time` is the instant that wrote its winning
    version; a stale update that loses leaves it unchanged, and compaction keeps it.
R6  Merge-on-read writes. Updates and deletes of a stored key go to a log file of its file
    group (a data block; deletes to a delete block carrying their `ts`, or Hudi's Integer 0
    for the delete operation and for tables without an ordering field), unless the group is a
    small file group (no log files) that takes inserts in this batch: then the group's base
    file is rewritten as in copy-on-write (R4). Inserts go to new base files or such small
    groups. Which small group an insert lands in is the planner's (hash) choice: the model
    takes it from the new base files' keys, and checks that inserts only ever land in new
    groups or log-free groups.
    Tagging decides whether a delete leaves a tombstone:
    - SIMPLE and BLOOM indexes (BLOOM finds the same keys, reading fewer files): a key is
      stored when it is in its group's base file (merge-on-read base files hold every key
      the SIMPLE index placed); a delete of a key that is not stored is
      dropped before writing (after the batch's precombine, R2). A key deleted in a log but
      still in the base file *is* stored: a later delete or insert of it goes to that log.
    - BUCKET index: a record's file group is its bucket (Java `List.hashCode` of the key,
      mod the bucket count). On merge-on-read every record of an existing bucket goes to its
      log, inserts and deletes of absent keys included (the writer never learns if a key is
      stored); a bucket that does not exist yet is created as a base file of the batch's
      surviving rows (deletes dropped), and not at all if none survive.
R7  Merge-on-read reads, per file slice (base file, then log blocks in order). A delete without
    an ordering value (Hudi's Integer 0, which the delete operation and tables without an
    ordering field write, or a null `ts`) orders by arrival, as Apache Hudi's commit-time
    delete: the key's versions and deletes before its latest such delete are gone, and what
    follows starts afresh (an insert after the delete operation is an insert, as on
    copy-on-write). Of what remains, as hudi-rs merges (`merge/record_merger.rs`,
    `merge/ordering.rs`): the candidate is the data version with the largest (`ts`, commit
    time); the key's remaining deletes (all with an ordering value) count as one, their largest
    ordering value and their latest instant, and drop the candidate if that value is larger
    than the candidate's `ts` (a null `ts` is smaller than any value), or equal with the latest
    delete instant after the candidate's commit. A bigint `ts` of 0 is a real value (hudi-rs
    0.5 and Hudi agree). Without an ordering field the candidate is the latest version, dropped
    iff a delete arrived after it. So until compaction a tombstone with an ordering value
    keeps it: a later insert of the key with a smaller `ts` stays deleted (on copy-on-write the
    key is gone and the later row is inserted). Apache Hudi and hudi-rs 0.5 depart after the
    delete operation: a later insert with a smaller `ts` than a version before the delete
    brings that deleted version back (the `hudi-rs-0.5` variant; a deliberate difference).
R8  Compaction (inline after `hoodie.compact.inline.max.delta.commits` delta commits since the
    last compaction, counting only when some slice has log files; or `table.compact`) rewrites
    every slice with log files as its merged result: tombstones disappear, versions keep
    their commit time. The snapshot does not change; read-optimized (base files only) catches
    up with it.
R9  Timeline. Each completed write is one instant (commit / deltacommit, plus a commit for an
    inline compaction). A failed write leaves no completed instant (undone at once, or rolled
    back by the next write, compaction, clean or explicit rollback). `rollback` undoes the
    latest completed write (refused when it is savepointed or there is none, and allowed to
    refuse when the state it returns to is beyond R10's readable range); a savepoint pins
    the latest completed write (refused twice on one instant); restore returns to a savepoint,
    undoing every later instant (compactions included) and dropping later savepoints.
R10 Reads. Time travel to instant t returns the snapshot after t. An incremental read of
    (b, e] returns the records of the snapshot at e whose commit time lies in (b, e]
    (deleted records do not appear). Cleaning and archival may make old instants unreadable
    (a refusal), never wrong; the latest min(`hoodie.cleaner.commits.retained`,
    `hoodie.keep.min.commits`) writes and savepointed ones stay readable.
R11 Schema. With `on_schema_change = append_new_columns` a batch may add a column; rows written
    before read it as null, and a known column a batch omits is null in the rows it writes.
R12 Inserts (`hoodie.datasource.write.operation` insert or bulk_insert; SIMPLE or BLOOM). A
    key the table stores as SIMPLE tagging sees it (R6: on copy-on-write, a key in the table;
    on merge-on-read, a key in its group's base file, even if a log deleted it since) is never
    changed: with dup policy `fail` any row of it makes the write raise `RecordKeyExistsError`
    and nothing is written; with `drop` its rows are skipped, before the batch's precombine
    (R2, R3) of the other rows. Of the other keys, deletes do nothing and the rest are inserted
    where R6 puts inserts; a bulk insert puts them in new file groups only, never rewriting a
    stored one.
R17 Clustering (`table.services.cluster`, every small file group: all of them here; not drawn
    with the BUCKET index, which refuses it). It rewrites the latest slices of file groups into
    new file groups (one per partition here), their logs merged as compaction merges them
    (R8: tombstones disappear), every record keeping its commit time: every read returns what
    it returned before, time travel and incremental ranges included; it completes as a
    `replacecommit` (none when the table has no file group). Later writes place as into any
    log-free file group (R6).
R13 Upgrade (table version 6 to 8). The rows at every instant stay what they were; failed
    writes are rolled back and, on merge-on-read, every slice with log files is compacted
    first (R8, one commit). From then on the table is version 8 (incremental ranges by
    completion time, R10); upgrading it again changes nothing.
R14 Merge modes (`hoodie.datasource.write.payload.class`, drawn: the default by the ordering
    field (DefaultHoodieRecordPayload with one, OverwriteWithLatestAvroPayload without, R2-R7),
    `commit` (OverwriteWithLatestAvroPayload with `ts`: COMMIT_TIME_ORDERING), `non_defaults`
    (OverwriteNonDefaultsWithLatestAvroPayload) and `partial` (PartialUpdateAvroPayload), both
    with `ts`). A batch precombines by `ts` in every mode (R2); `partial` fills the winner's
    null columns from the batch's other rows of the key, the larger `ts` first. Against the
    stored row (R4) and folding a slice's versions in arrival order (R7): `commit` lets the
    incoming row win whatever its `ts`; `non_defaults` takes the incoming row's non-null
    columns (`ts` included) over the stored ones; `partial` takes the row with the larger `ts`
    (ties: the incoming) and fills its nulls from the other. In all three every delete orders
    by arrival (written as Hudi's Integer 0: no ordering value), and a merged row carries the
    instant of the latest version (R5: the column-wise payloads rewrite the row even when the
    stored side wins). The column-wise payloads are not drawn with global indexes (refused),
    nor is `commit` on a version 6 merge-on-read table with an upgrade (its upgrade makes the
    table event-time ordered, changing the rows of the instants before it).
R15 Partial updates (`hoodie.write.partial.update.columns`, dbt's merge_update_columns /
    merge_exclude_columns; drawn on upserts: a set of the batch's columns, `id` alone meaning
    only the key). A winning row of a key the table stores (as a snapshot read would show it
    when the write starts: R4 on copy-on-write, R7's merged slot on merge-on-read) takes the
    listed columns, the key, partition and `ts`, and keeps every other column's stored value
    (null for a column the stored version lacks); a key not stored (or removed by a log) is
    inserted whole, and deletes are deletes. Not drawn with the column-wise payloads (refused)
    nor with a global index that moves records (refused).
R18 An upsert that deletes keys in its own commit (`HoodieTable.upsert(df, deletes=...)`, what
    a dbt microbatch batch writes to replace its event-time window): keys of no row of the
    batch, each removed whatever its stored ordering value (a delete without ordering value:
    arrival decides, R7), in the same instant as the upsert's rows; under a global index
    wherever the key is stored (G7).
R16 CDC (`hoodie.table.cdc.enabled`, drawn with each `hoodie.table.cdc.supplemental.logging.mode`
    at creation). Each completed write instant has a change log: the snapshot after it against
    the snapshot before it, by (partition, key): a record that appeared is `i` (after image),
    one that vanished `d` (before image), one whose winning version this instant wrote `u`
    (before and after; an upsert re-writing an identical row is a `u` with before == after,
    and so is a column-wise payload's merge where the stored side won, R14). So a stale update
    that loses, a delete of a key the table does not hold and an insert the dup policy drops
    change nothing; a record a global index moves is `d` in its old partition and `i` in its
    new one (G4). Compaction, clustering and an upgrade's compaction change nothing. A CDC
    read of (b, e] (requested instant times) returns the change logs of the writes in it, the
    images of the data columns only (D1). Cleaning and archival may refuse a range, never
    answer it wrongly, and must not refuse one R10 keeps readable.
G1-G9 GLOBAL_SIMPLE (`hoodie.index.type`; Apache Hudi's rules as run against 0.15 and 1.2, in
    the order of its findings). A record is its key alone (G1): the batch reduces to one row
    per key (G2, R2 over the key alone; R3 for two rows of a key in any partitions). Tagging
    finds the key in any partition (G3: on merge-on-read, where its group's base file holds it;
    of two such places, the one the merge still holds). A winner whose key is stored in P and
    whose partition is Q != P: a delete (`_hoodie_is_deleted`, or the delete operation) goes to
    P (G7); with `update_partition_path` (G4) the key moves (a delete without ordering value in
    P's group, the winner inserted in Q, where R6 puts inserts) unless the stored version's
    `ts` is larger (then the winner goes to P as an update, which loses: stored row and commit
    time kept, a listed deliberate difference from Apache Hudi's new commit time), and unless
    a merge-on-read log already removed the stored copy (only the insert); without it (G6) the
    winner is an update in P (its `_hoodie_partition_path` stays P). No inserts are drawn
    (Apache Hudi's skip the index, G9; ours refuse or drop keys stored anywhere).
Instants are the model's own integers (1, 2, ...), in timeline order; the test maps them to the
table's instant times.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
SIMPLE, BUCKET, BLOOM = "SIMPLE", "BUCKET", "BLOOM"
GLOBAL_SIMPLE, GLOBAL_BLOOM, RECORD_INDEX = "GLOBAL_SIMPLE", "GLOBAL_BLOOM", "RECORD_INDEX"
# Indexes that tag by looking up stored keys: BLOOM tags as SIMPLE does (R6, R12).
KEY_LOOKUP = (SIMPLE, BLOOM)
# Global indexes: a key is unique across the table (G1-G9); GLOBAL_BLOOM and RECORD_INDEX (the
# metadata table's record index, which the harness checks against the table after every step)
# find what GLOBAL_SIMPLE finds.
GLOBAL = (GLOBAL_SIMPLE, GLOBAL_BLOOM, RECORD_INDEX)
NATURAL = "natural"  # a delete's ordering value meaning "no ordering": arrival decides (R7)
VALUE_COLUMNS = ("v",)  # data columns every batch carries besides key, partition and ts
EXTRA_COLUMNS = ("e1", "e2")  # columns a batch may add (R11)


# -- the table's parameters and the operations -------------------------------------------------
@dataclass(frozen=True)
class Params:
    table_type: str = COW
    index: str = SIMPLE
    partitioned: bool = True
    precombine: bool = True
    compact_every: int = 3  # hoodie.compact.inline.max.delta.commits
    bucket_count: int = 2
    commits_retained: int = 10  # hoodie.cleaner.commits.retained
    keep_min: int = 20  # hoodie.keep.min.commits
    keep_max: int = 30  # hoodie.keep.max.commits
    small_file_limit: int | None = None  # hoodie.parquet.small.file.limit (None: default)
    # hoodie.parquet.max.file.size (None: default); a few kilobytes make partitions of several
    # file groups, split into routing units by key range or tagged in a job of their own
    max_file_size: int | None = None
    # hoodie.memory.merge.max.size (None: default); a few kilobytes set a bulk insert's
    # records aside on local disk after nearly every batch
    write_memory: int | None = None
    table_version: int = 6  # hoodie.write.table.version
    # GLOBAL_SIMPLE: hoodie.simple.index.update.partition.path (G4, G6)
    update_partition_path: bool = True
    # hoodie.metadata.enable on writes (our readers' default lists through the metadata table
    # the writes keep); drawn by the soak only (`scenarios(metadata_tables=True)`)
    metadata_table: bool = False
    # R14: "" (by the ordering field), "commit", "non_defaults" or "partial"
    merge: str = ""
    # R16: "" (no CDC) or the supplemental logging mode of a table created with CDC on
    cdc: str = ""

    @property
    def mor(self) -> bool:
        return self.table_type == MOR

    @property
    def event_time(self) -> bool:
        """Does the stored row's `ts` decide against an incoming one (R4, R7)?"""
        return self.precombine and self.merge == ""


@dataclass(frozen=True)
class Rec:
    """One incoming row. `extras`: values of the extra columns the batch carries."""

    key: str
    partition: str | None = None
    ts: int | None = None
    v: str | None = None
    deleted: bool = False
    extras: tuple[tuple[str, int | None], ...] = ()


@dataclass(frozen=True)
class Upsert:
    rows: tuple[Rec, ...]
    columns: tuple[str, ...] = ()  # the extra columns (EXTRA_COLUMNS) this batch carries
    # R18: (key, partition)s deleted in the same commit, whatever their ordering value (a
    # microbatch replacing its window: `HoodieTable.upsert(df, deletes=...)`); keys of no row
    deletes: tuple[tuple[str, str | None], ...] = ()
    # R15: the columns a stored key's winning row replaces (a partial update); (): whole rows
    update_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Insert:
    """An insert (R12): `bulk` for bulk_insert; `policy` is the dup policy, fail or drop."""

    rows: tuple[Rec, ...]
    columns: tuple[str, ...] = ()
    bulk: bool = False
    policy: str = "fail"


@dataclass(frozen=True)
class Delete:
    """The delete operation: (key, partition) pairs; duplicates allowed (R4)."""

    keys: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class FailedUpsert:
    """An upsert made to fail at `point` (a crash point of the write client). `recovery`:
    'undone' (the writer undoes itself), 'crashed' (left pending for the next operation),
    'explicit' (left pending, then rolled back with Rollback.rollback_failed_writes)."""

    upsert: Upsert
    point: str = "write.files_written"
    recovery: str = "undone"


@dataclass(frozen=True)
class Compact:
    pass


@dataclass(frozen=True)
class Clean:
    pass


@dataclass(frozen=True)
class Archive:
    pass


@dataclass(frozen=True)
class Savepoint:
    pass


@dataclass(frozen=True)
class Restore:
    pass


@dataclass(frozen=True)
class Rollback:
    pass


@dataclass(frozen=True)
class Cluster:
    """`table.services.cluster` (R17)."""


@dataclass(frozen=True)
class Upgrade:
    """`table.upgrade` to table version 8 (drawn for version 6 tables only)."""


Op = (
    Upsert
    | Insert
    | Delete
    | FailedUpsert
    | Compact
    | Clean
    | Archive
    | Savepoint
    | Restore
    | Rollback
    | Upgrade
    | Cluster
)


# -- physical state ------------------------------------------------------------------------
@dataclass(frozen=True)
class Version:
    """A data version of a record: its ordering value, the instant that wrote it, its values."""

    ts: int | None
    instant: int
    values: tuple[tuple[str, object], ...]  # column -> value, key/partition/ts excluded


@dataclass(frozen=True)
class Tomb:
    """A log delete: its ordering value (or NATURAL) and instant."""

    ordering: int | str | None
    instant: int


@dataclass(frozen=True)
class Slot:
    """One record's versions in its file slice: the base file's version and the log entries
    since (Version or Tomb), in order; `group` is its file group (merge-on-read)."""

    base: Version | None = None
    logs: tuple[Version | Tomb, ...] = ()
    group: object = None


@dataclass(frozen=True)
class Group:
    partition: str | None
    has_logs: bool = False


@dataclass(frozen=True)
class State:
    slots: dict  # (partition, key) -> Slot
    groups: dict  # group id -> Group (merge-on-read; BUCKET ids are (partition, bucket))
    columns: tuple[str, ...] = ()  # extra columns the table has, in order of addition
    delta_commits: int = 0  # completed delta commits since the last compaction
    # A global index's move put a key back into a partition whose file group still holds a
    # removed copy of it (G8): read-optimized queries show both until compaction, which one
    # slot per (partition, key) does not hold, so they are not compared meanwhile.
    ro_blind: bool = False


@dataclass(frozen=True)
class Completed:
    instant: int
    action: str  # commit | deltacommit
    state: State
    compaction: bool = False
    # R16: (op, (partition, key), before row, after row) of each record the write changed
    changes: tuple = ()


class ModelMismatch(AssertionError):
    """The table did something the rules do not allow (placement, instants)."""


@dataclass(frozen=True)
class Expected:
    """What an operation must do: raise `error` (a class name), or complete `actions`."""

    error: tuple[str, ...] | None = None
    actions: tuple[str, ...] = ()
    may_refuse: tuple[str, ...] = ()  # errors the operation may raise instead (nothing changes)


@dataclass(frozen=True)
class Placement:
    """Where a merge-on-read write put things (read from the commit's write stats and base
    files): file id -> the keys of the base file it wrote, for groups that got a base file."""

    base_files: dict = field(default_factory=dict)  # file id -> (partition, frozenset of keys)
    log_groups: frozenset = frozenset()  # file ids that got a log file


# -- ordering --------------------------------------------------------------------------------
def _order(ts: int | None) -> tuple:
    """Ordering values compare with null below any value (R2, R4)."""
    return (0,) if ts is None else (1, ts)


def java_bucket(key: str, buckets: int) -> int:
    """Hudi's bucket of a one-field key: Java `List.hashCode` of [key], made non-negative, mod
    the bucket count (`BucketIdentifier.getBucketId`)."""
    h = 0
    units = key.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (h * 31 + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    h = (31 * 1 + h) & 0xFFFFFFFF
    return (h & 0x7FFFFFFF) % buckets


class TableModel:
    def __init__(self, params: Params):
        self.params = params
        self.state = State(slots={}, groups={})
        self.history: list[Completed] = []
        self.savepoints: list[int] = []
        self.version = params.table_version  # R13: an upgrade makes it 8
        self._next = 0
        self._most_later: dict[int, int] = {}  # instant -> most later writes it ever had

    # -- merging (R7) ---------------------------------------------------------------------------
    def merged(self, slot: Slot, variant: str = "rule") -> Version | None:
        """R7: the record a reader returns for a slot, or None.

        `variant="hudi-rs-0.5"` is what the hudi 0.5.0 package was seen to do where it departs
        from R7 (its source is not at hand): each delete is weighed on its own, and a delete
        without ordering value must be later than every data version of the key, not just the
        winning one; among a slot's data versions a null `ts` counts as 0 (Apache Hudi's default
        ordering value), so it ties with a `ts` of 0 and the later version wins (found by
        `make soak SEQUENCES=40 SEED=11`). The test only uses it to tell a known hudi-rs
        divergence from a new one.
        """
        entries: tuple = slot.logs if slot.base is None else (slot.base, *slot.logs)
        if variant == "rule" and self.params.merge:
            return self._folded(entries)
        if variant == "rule" and self.params.precombine:
            # a delete without ordering value: what arrived before it is gone
            unordered = [i for i, e in enumerate(entries) if isinstance(e, Tomb)
                         and e.ordering in (NATURAL, None)]  # fmt: skip
            if unordered:
                entries = entries[unordered[-1] + 1 :]
        versions = [e for e in entries if isinstance(e, Version)]
        if not versions:
            return None
        order = _order
        if variant == "hudi-rs-0.5":
            order = lambda ts: _order(0 if ts is None else ts)  # noqa: E731
        if self.params.precombine:
            candidate = max(versions, key=lambda v: (order(v.ts), v.instant))
        else:
            candidate = max(versions, key=lambda v: v.instant)
        tombs = [e for e in entries if isinstance(e, Tomb)]
        if not tombs:
            return candidate
        if variant == "hudi-rs-0.5":
            latest = max(v.instant for v in versions)
            for tomb in tombs:
                if not self.params.precombine or tomb.ordering in (NATURAL, None):
                    kills = tomb.instant > latest
                else:
                    kills = _order(tomb.ordering) > _order(candidate.ts) or (
                        tomb.ordering == candidate.ts and tomb.instant > candidate.instant
                    )
                if kills:
                    return None
            return candidate
        # hudi-rs's rule (merge/ordering.rs) for ordered deletes: the key's deletes as one,
        # with their largest ordering value and their latest instant.
        instant = max(t.instant for t in tombs)
        ordered = [t.ordering for t in tombs]
        if not self.params.precombine:
            kills = instant > candidate.instant
        else:
            top = max(ordered)
            kills = _order(top) > _order(candidate.ts) or (
                top == candidate.ts and instant > candidate.instant
            )
        return None if kills else candidate

    def _folded(self, entries: tuple) -> Version | None:
        """R14: a slice under a merge mode other than event time: what arrived after the
        latest delete, folded in arrival order."""
        tombs = [i for i, e in enumerate(entries) if isinstance(e, Tomb)]
        if tombs:
            entries = entries[tombs[-1] + 1 :]
        merged = None
        for version in entries:
            merged = version if merged is None else self._combined(merged, version)
        return merged

    def _combined(self, stored: Version, incoming: Version) -> Version:
        """R14: the incoming version against the stored one (not by event time)."""
        merge = self.params.merge
        if merge in ("", "commit"):
            return incoming
        first, second = incoming, stored
        if merge == "partial" and _order(stored.ts) > _order(incoming.ts):
            first, second = stored, incoming
        one, two = dict(first.values), dict(second.values)
        names = list(dict.fromkeys([*two, *one]))
        values = tuple((n, one.get(n) if one.get(n) is not None else two.get(n)) for n in names)
        ts = first.ts if first.ts is not None else second.ts
        return Version(ts, incoming.instant, values)

    # -- reads (R10) ----------------------------------------------------------------------------
    def rows(
        self, state: State | None = None, read_optimized: bool = False, variant: str = "rule"
    ) -> dict:
        """(partition, key) -> row dict (ts, values, commit instant) of a state's snapshot."""
        state = self.state if state is None else state
        out = {}
        for ident, slot in state.slots.items():
            version = slot.base if read_optimized else self.merged(slot, variant)
            if version is not None:
                out[ident] = self._row(version, state.columns)
        return out

    @staticmethod
    def _row(version: Version, columns: tuple[str, ...]) -> dict:
        values = dict(version.values)
        row = {"ts": version.ts, "_instant": version.instant}
        for name in (*VALUE_COLUMNS, *columns):
            row[name] = values.get(name)
        return row

    def completed(self) -> list[Completed]:
        return list(self.history)

    def state_at(self, instant: int) -> State:
        for done in self.history:
            if done.instant == instant:
                return done.state
        raise KeyError(instant)

    def incremental(self, begin: int, end: int, variant: str = "rule") -> dict:
        """R10: records of the snapshot at `end` whose commit lies in (begin, end]."""
        return {
            ident: row
            for ident, row in self.rows(self.state_at(end), variant=variant).items()
            if begin < row["_instant"] <= end
        }

    def changes(self, begin: int, end: int) -> list[tuple]:
        """R16: (instant, op, (partition, key), before row, after row) of every change the
        writes in (begin, end] made."""
        return [(done.instant, *change) for done in self.history
                if begin < done.instant <= end for change in done.changes]  # fmt: skip

    def never_dropped(self) -> bool:
        """Has no write ever had min(commits retained, keep.min.commits) later writes (so no
        clean or archive can have taken anything yet)?"""
        keep = min(self.params.commits_retained, self.params.keep_min)
        return all(most < keep for most in self._most_later.values())

    def guaranteed_readable(self, savepoints: bool = True) -> set[int]:
        """R10: instants time travel must still reach: savepoints, and writes that never had
        min(commits retained, keep.min.commits) later writes (once they had, a clean or an
        archive may have taken them, and a rollback or restore does not bring them back)."""
        keep = min(self.params.commits_retained, self.params.keep_min)
        recent = {c.instant for c in self.history if self._most_later[c.instant] < keep}
        return recent | set(self.savepoints) if savepoints else recent

    # -- operations -----------------------------------------------------------------------------
    def expect(self, op: Op) -> Expected:
        """What `op` must do, before it runs (no state change)."""
        p = self.params
        if isinstance(op, Upsert):
            if not p.precombine and _has_duplicates(op.rows, by_key=p.index in GLOBAL):
                return Expected(error=("DuplicateRecordKeyError",))
            return Expected(actions=self._write_actions())
        if isinstance(op, Insert):
            errors = ()
            # With `drop`, the rows of stored keys are skipped before any precombine.
            kept = [r for r in op.rows if op.policy == "fail" or not self._stored(_ident(r))]
            if not p.precombine and _has_duplicates(kept):
                errors += ("DuplicateRecordKeyError",)
            if op.policy == "fail" and any(self._stored(i) for i in self._winners(op.rows)):
                errors += ("RecordKeyExistsError",)
            return Expected(error=errors) if errors else Expected(actions=self._write_actions())
        if isinstance(op, Delete):
            return Expected(actions=self._write_actions())
        if isinstance(op, FailedUpsert):
            # the injected fault is none of the core's errors: the write reports it as a
            # TaskFailedError naming it (a CommitError), or a duplicate key stops it first
            return Expected(error=("CommitError", "DuplicateRecordKeyError", "InjectedFault",
                                   "TaskFailedError"))  # fmt: skip
        if isinstance(op, Compact):
            return Expected(actions=("commit",) if self._has_logs() else ())
        if isinstance(op, Upgrade):
            # R13: a merge-on-read table's logs are compacted first (once: later upgrades of
            # the version 8 table do nothing).
            upgrading = self.version == 6 and self.params.mor and self._has_logs()
            return Expected(actions=("commit",) if upgrading else ())
        if isinstance(op, Savepoint):
            if not self.history or self.history[-1].instant in self.savepoints:
                return Expected(error=("TimelineError",))
            return Expected()
        if isinstance(op, Restore):
            return Expected() if self.savepoints else Expected(error=("NoSavepoint",))
        if isinstance(op, Rollback):
            if not self.history or self.history[-1].instant in self.savepoints:
                return Expected(error=("TimelineError",))
            if len(self.history) > 1 and self.history[-2].instant not in self.guaranteed_readable():
                return Expected(may_refuse=("TimelineError",))  # R9: cleaned or archived
            return Expected()
        return Expected()  # Clean, Archive

    def _write_actions(self) -> tuple[str, ...]:
        if not self.params.mor:
            return ("commit",)
        return ("deltacommit",)  # an inline compaction's commit is added by `apply`

    def _has_logs(self, state: State | None = None) -> bool:
        state = self.state if state is None else state
        return any(g.has_logs for g in state.groups.values())

    def apply(self, op: Op, placement: Placement | None = None) -> tuple[str, ...]:
        """Apply a successful `op`; returns the actions of the write instants it completed."""
        if isinstance(op, (Upsert, Insert, Delete)):
            instant = self._instant()
            if isinstance(op, Upsert):
                state = self._upsert(op, instant, placement)
            elif isinstance(op, Insert):
                state = self._insert(op, instant, placement)
            else:
                state = self._delete(op, instant, placement)
            if self.params.mor:
                state = replace(state, delta_commits=state.delta_commits + 1)
            self._complete(instant, "deltacommit" if self.params.mor else "commit", state)
            if (
                self.params.mor
                and state.delta_commits >= self.params.compact_every
                and self._has_logs(state)
            ):
                self._compact()
                return ("deltacommit", "commit")
            return (self.history[-1].action,)
        if isinstance(op, Compact):
            if self._has_logs():
                self._compact()
                return ("commit",)
            return ()
        if isinstance(op, Cluster):
            if placement is None:  # no file group to cluster: no instant
                return ()
            self._cluster(placement)
            return ("replacecommit",)
        if isinstance(op, Upgrade):
            compacted = self.version == 6 and self.params.mor and self._has_logs()
            self.version = 8
            if compacted:
                self._compact()
                return ("commit",)
            return ()
        if isinstance(op, Savepoint):
            self.savepoints.append(self.history[-1].instant)
        elif isinstance(op, Restore):
            target = max(self.savepoints)
            while self.history[-1].instant != target:
                self.history.pop()
            self.savepoints = [s for s in self.savepoints if s <= target]
            self.state = self.history[-1].state
        elif isinstance(op, Rollback):
            self.history.pop()
            self.state = self.history[-1].state if self.history else State(slots={}, groups={})
        return ()

    def _instant(self) -> int:
        self._next += 1
        return self._next

    def _complete(self, instant: int, action: str, state: State, compaction=False) -> None:
        changes = () if compaction or action == "replacecommit" else self._changes(state, instant)
        self.state = state
        self.history.append(Completed(instant, action, state, compaction, changes))
        for position, done in enumerate(self.history):
            later = len(self.history) - 1 - position
            self._most_later[done.instant] = max(self._most_later.get(done.instant, 0), later)

    def _changes(self, after: State, instant: int) -> tuple:
        """R16: the change log of a write from the current state to `after`."""
        old, new = self.rows(self.state), self.rows(after)
        out = []
        for ident, row in new.items():
            was = old.get(ident)
            if was is None:
                out.append(("i", ident, None, row))
            elif row["_instant"] == instant:
                out.append(("u", ident, was, row))
        out += [("d", ident, was, None) for ident, was in old.items() if ident not in new]
        return tuple(out)

    def _compact(self) -> None:
        """R8: every slice with log files becomes its merged result."""
        state = self.state
        slots = dict(state.slots)
        for ident, slot in state.slots.items():
            if slot.logs:
                merged = self.merged(slot)
                if merged is None:
                    del slots[ident]
                else:
                    slots[ident] = Slot(base=merged, logs=(), group=slot.group)
        groups = {gid: replace(g, has_logs=False) for gid, g in state.groups.items()}
        self._complete(
            self._instant(),
            "commit",
            replace(state, slots=slots, groups=groups, delta_commits=0, ro_blind=False),
            compaction=True,
        )

    def _cluster(self, placement: Placement) -> None:
        """R17: every slot merged (as compaction merges it) into the new file group that
        holds its key; the records and their commit times unchanged."""
        state = self.state
        located = {(partition, key): gid
                   for gid, (partition, keys) in placement.base_files.items()
                   for key in keys}  # fmt: skip
        slots = {}
        for ident, slot in state.slots.items():
            merged = self.merged(slot) if slot.logs else slot.base
            if merged is None:
                continue
            if self.params.mor and ident not in located:
                raise ModelMismatch(f"R17: record {ident} is in no file group clustering wrote")
            slots[ident] = Slot(base=merged, group=located.get(ident))
        groups = {gid: Group(partition) for gid, (partition, _) in placement.base_files.items()}
        if not self.params.mor:
            groups = dict(state.groups)
        self._complete(self._instant(), "replacecommit",
                       replace(state, slots=slots, groups=groups, ro_blind=False))  # fmt: skip

    # -- writes ---------------------------------------------------------------------------------
    def _winners(self, rows: Iterable[Rec]) -> dict:
        """R2/R3: one row per (partition, key), in first-arrival order of the keys."""
        out: dict = {}
        for rec in rows:
            ident = (rec.partition, rec.key)
            held = out.get(ident)
            if held is None or not self.params.precombine or _order(rec.ts) >= _order(held.ts):
                out[ident] = rec
        if self.params.merge == "partial":
            # R14: by `ts` (then arrival), each row's nulls from the rows below it
            rows = list(rows)
            for ident in out:
                ranked = sorted((i for i, r in enumerate(rows) if _ident(r) == ident),
                                key=lambda i: (_order(rows[i].ts), i))  # fmt: skip
                merged = rows[ranked[0]]
                for i in ranked[1:]:
                    merged = _filled(rows[i], merged)
                out[ident] = merged
        return out

    def _version(self, rec: Rec, instant: int, columns: tuple[str, ...]) -> Version:
        extras = dict(rec.extras)
        values = (("v", rec.v),) + tuple((c, extras.get(c)) for c in columns)
        return Version(rec.ts, instant, values)

    def _incoming_wins(self, rec_ts, stored: Version) -> bool:
        """R4: the incoming winner replaces the stored row unless the stored ts is larger."""
        if not self.params.event_time:
            return True
        return not _order(stored.ts) > _order(rec_ts)

    def _upsert(self, op: Upsert, instant: int, placement: Placement | None) -> State:
        state = self.state
        columns = state.columns + tuple(c for c in op.columns if c not in state.columns)
        state = replace(state, columns=columns)
        if self.params.index in GLOBAL:
            entries, fresh = self._global_entries(op, instant)
            entries = self._partial(op, entries, columns)
            for key, _partition in op.deletes:  # R18, G7: wherever the key is stored
                stored = self._global_location(key)
                if stored is not None:
                    entries[stored] = Tomb(NATURAL, instant)
            return self._write(state, entries, instant, placement, fresh=fresh)
        winners = self._winners(op.rows)
        entries = {
            ident: (
                Tomb(rec.ts if self.params.event_time else NATURAL, instant)
                if rec.deleted
                else self._version(rec, instant, op.columns)
            )
            for ident, rec in winners.items()
        }
        entries = self._partial(op, entries, columns)
        # R18: deletes of the same commit remove the stored row whatever its ordering value
        entries.update({(part, key): Tomb(NATURAL, instant) for key, part in op.deletes})
        return self._write(state, entries, instant, placement)

    def _partial(self, op: Upsert, entries: dict, columns: tuple[str, ...]) -> dict:
        """R15: each new version of a stored key with the columns it does not list kept."""
        if not op.update_columns:
            return entries
        out = {}
        for ident, entry in entries.items():
            slot = self.state.slots.get(ident)
            stored = None
            if isinstance(entry, Version) and slot is not None:
                stored = self.merged(slot) if self.params.mor else slot.base
            if stored is None:
                out[ident] = entry
                continue
            old, new = dict(stored.values), dict(entry.values)
            out[ident] = replace(entry, values=tuple(
                (name, new.get(name) if name in op.update_columns else old.get(name))
                for name in (*VALUE_COLUMNS, *columns)
            ))  # fmt: skip
        return out

    def _stored(self, ident) -> bool:
        """R12: does SIMPLE tagging find this (partition, key) in the table (R6)?"""
        slot = self.state.slots.get(ident)
        return slot is not None and (slot.base is not None or not self.params.mor)

    def _insert(self, op: Insert, instant: int, placement: Placement | None) -> State:
        state = self.state
        columns = state.columns + tuple(c for c in op.columns if c not in state.columns)
        state = replace(state, columns=columns)
        entries = {
            ident: self._version(rec, instant, op.columns)
            for ident, rec in self._winners(op.rows).items()
            if not rec.deleted and not self._stored(ident)
        }
        if op.bulk and placement is not None:
            rewritten = set(placement.base_files) & set(state.groups)
            if rewritten:
                raise ModelMismatch(f"R12: a bulk insert rewrote stored file groups {rewritten}")
        return self._write(state, entries, instant, placement)

    # -- GLOBAL_SIMPLE (G1-G9) -------------------------------------------------------------------
    def _global_location(self, key: str):
        """G3: the (partition, key) of the stored record of `key`, or None."""
        slots = self.state.slots
        found = [i for i, slot in slots.items() if i[1] == key
                 and (slot.base is not None or not self.params.mor)]  # fmt: skip
        if len(found) > 1:
            found = [i for i in found if self.merged(slots[i]) is not None]
        if len(found) > 1:
            raise ModelMismatch(f"model: key {key} is stored in {found}")
        return found[0] if found else None

    def _global_entries(self, op: Upsert, instant: int) -> tuple[dict, set]:
        """G2-G7: the entries of an upsert, and the (partition, key)s inserted afresh."""
        winners: dict = {}
        for rec in op.rows:  # G2: one row per key
            held = winners.get(rec.key)
            if held is None or not self.params.precombine or _order(rec.ts) >= _order(held.ts):
                winners[rec.key] = rec
        entries: dict = {}
        fresh: set = set()
        for key, rec in winners.items():
            target = (rec.partition, key)
            entry = (
                Tomb(rec.ts if self.params.event_time else NATURAL, instant)
                if rec.deleted
                else self._version(rec, instant, op.columns)
            )
            stored = self._global_location(key)
            if stored is None or stored == target:
                entries[target] = entry
                continue
            if rec.deleted or not self.params.update_partition_path:
                entries[stored] = entry  # G6, G7: where the key is stored
                continue
            slot = self.state.slots[stored]
            current = self.merged(slot) if self.params.mor else slot.base
            if current is not None and not self._incoming_wins(rec.ts, current):
                entries[stored] = entry  # the stored version wins: no move
                continue
            if current is not None:
                entries[stored] = Tomb(NATURAL, instant)  # G4: deleted where it was
            entries[target] = entry
            fresh.add(target)
        return entries, fresh

    def _delete(self, op: Delete, instant: int, placement: Placement | None) -> State:
        if self.params.index in GLOBAL:  # G7: wherever the key is stored
            located = [self._global_location(k) for k, _p in op.keys]
            entries = {i: Tomb(NATURAL, instant) for i in located if i is not None}
            return self._write(self.state, entries, instant, placement, delete_operation=True)
        entries = {(p, k): Tomb(NATURAL, instant) for k, p in op.keys}
        return self._write(self.state, entries, instant, placement, delete_operation=True)

    def _write(self, state, entries, instant, placement, delete_operation=False,
               fresh=frozenset()) -> State:  # fmt: skip
        if not self.params.mor:
            return self._write_cow(state, entries, delete_operation)
        if self.params.index == BUCKET:
            return self._write_mor_bucket(state, entries)
        return self._write_mor_simple(state, entries, placement or Placement(), delete_operation,
                                      fresh)  # fmt: skip

    def _merge_into(self, stored: Version | None, entry, delete_operation: bool):
        """R4 at write time: the stored row after the incoming entry (a base-file rewrite)."""
        if stored is None:
            return None if isinstance(entry, Tomb) else entry
        if isinstance(entry, Tomb):
            no_ordering = entry.ordering in (NATURAL, None)
            if delete_operation or no_ordering or self._incoming_wins(entry.ordering, stored):
                return None
            return stored
        if self.params.merge:
            return self._combined(stored, entry)
        return entry if self._incoming_wins(entry.ts, stored) else stored

    def _write_cow(self, state, entries, delete_operation) -> State:
        slots = dict(state.slots)
        for ident, entry in entries.items():
            slot = slots.get(ident)
            stored = slot.base if slot else None
            after = self._merge_into(stored, entry, delete_operation)
            if after is None:
                slots.pop(ident, None)
            else:
                slots[ident] = Slot(base=after)
        return replace(state, slots=slots)

    def _write_mor_bucket(self, state, entries) -> State:
        slots, groups = dict(state.slots), dict(state.groups)
        created: dict = {}
        for ident, entry in entries.items():
            gid = (ident[0], java_bucket(ident[1], self.params.bucket_count))
            if gid in state.groups:
                slot = slots.get(ident) or Slot(group=gid)
                slots[ident] = replace(slot, logs=slot.logs + (entry,))
                groups[gid] = replace(groups[gid], has_logs=True)
            elif isinstance(entry, Version):
                created.setdefault(gid, []).append((ident, entry))
        for gid, members in created.items():
            groups[gid] = Group(gid[0])
            for ident, version in members:
                slots[ident] = Slot(base=version, group=gid)
        return replace(state, slots=slots, groups=groups)

    def _write_mor_simple(
        self, state, entries, placement: Placement, delete_operation, fresh=frozenset()
    ) -> State:
        """`fresh`: records inserted whatever the slot holds (a global index's move into a
        partition whose file group still holds a removed copy of the key: G8)."""
        slots, groups = dict(state.slots), dict(state.groups)
        rewritten = set(placement.base_files)
        for gid in rewritten & set(state.groups):
            if state.groups[gid].has_logs:
                raise ModelMismatch(
                    f"R6: file group {gid} has log files but the write rewrote its base file"
                )
        located = {}  # file id of each new key
        for gid, (partition, keys) in placement.base_files.items():
            for key in keys:
                located[(partition, key)] = gid
        for ident, entry in entries.items():
            slot = slots.get(ident)
            stored = slot is not None and slot.base is not None  # SIMPLE tagging (R6)
            if not stored or ident in fresh:
                if isinstance(entry, Tomb):
                    continue  # a delete of a key the table does not hold
                gid = located.get(ident)
                if gid is None:
                    raise ModelMismatch(f"R6: inserted record {ident} is in no new base file")
                if slot is not None and slot.logs and ident not in fresh:
                    raise ModelMismatch(f"model: {ident} has log entries but no base version")
                if slot is not None and slot.base is not None:
                    state = replace(state, ro_blind=True)
                slots[ident] = Slot(base=entry, group=gid)
                groups.setdefault(gid, Group(ident[0]))
                continue
            gid = slot.group
            if gid in rewritten:
                after = self._merge_into(self.merged(slot), entry, delete_operation)
                if after is None:
                    slots.pop(ident)
                else:
                    slots[ident] = Slot(base=after, group=gid)
            else:
                slots[ident] = replace(slot, logs=slot.logs + (entry,))
                groups[gid] = replace(groups[gid], has_logs=True)
        return replace(state, slots=slots, groups=groups)

    # -- placement hints for the harness ---------------------------------------------------------
    def groups_of(self) -> dict:
        """File group of each record (merge-on-read SIMPLE: learnt from placements)."""
        return {ident: slot.group for ident, slot in self.state.slots.items()}


def _filled(winner: Rec, other: Rec) -> Rec:
    """R14 `partial`'s batch precombine: the winner's null columns from the other row."""
    extras = dict(other.extras)
    return replace(
        winner,
        ts=winner.ts if winner.ts is not None else other.ts,
        v=winner.v if winner.v is not None else other.v,
        extras=tuple((c, x if x is not None else extras.get(c)) for c, x in winner.extras),
    )


def _ident(rec: Rec) -> tuple:
    return (rec.partition, rec.key)


def _has_duplicates(rows: Iterable[Rec], by_key: bool = False) -> bool:
    seen = set()
    for rec in rows:
        ident = rec.key if by_key else (rec.partition, rec.key)
        if ident in seen:
            return True
        seen.add(ident)
    return False
