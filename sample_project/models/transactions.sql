{{ config(
    materialized='cow_upsert',
    record_key='txn_id',
    partition_path='txn_date',
    precombine_field='ts',
    event_time='txn_date',
) }}

-- Batch 1 loads the first rows. Batch 2 corrects txn 2 (newer ts), deletes txn 4, sends a
-- stale version of txn 5 (older ts: the stored row wins) and adds txns 7 and 8.
select
    txn_id,
    customer_id,
    amount,
    ts,
    txn_date,
    is_deleted as _hoodie_is_deleted
from {{ ref('raw_transactions') }}
where batch = {{ var('batch') }}
