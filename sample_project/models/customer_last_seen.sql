{{ config(
    materialized='mor_upsert',
    record_key='customer_id',
    precombine_field='ts',
    compaction='off',
    options={'hoodie.parquet.small.file.limit': '0'},
) }}

-- A merge-on-read table: each run appends only the customers it saw to log files (batch 2's
-- stale row for customer 104, ts=0, loses to the stored one when read). New customers go to
-- a new file group: with the small-file limit at 0 no base file is rewritten to take them
-- (the default would rewrite this tiny table's only file group, as Hudi does).
-- `dbt run-operation hoodie_compact --args '{model: customer_last_seen}'` folds the logs into
-- new base files.
select
    customer_id,
    max(txn_date) as last_txn_date,
    max(ts) as ts,
    count(*) as transactions_in_batch
from {{ ref('raw_transactions') }}
where batch = {{ var('batch') }} and not is_deleted
group by customer_id
