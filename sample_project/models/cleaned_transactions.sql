{{ config(
    materialized='incremental',
    file_format='hudi',
    table_type='cow',
    incremental_strategy='microbatch',
    event_time='txn_date',
    batch_size='day',
    begin='2026-11-01',
    unique_key='txn_id',
    partition_path='txn_date',
    precombine_field='ts',
    options={'hoodie.table.cdc.enabled': 'true'},
) }}

-- Consumes `transactions` a day at a time: dbt runs one batch per day of `txn_date` (run_demo
-- passes --event-time-start/--event-time-end), each one commit that upserts the day's rows
-- and deletes the rows of that day no longer upstream (txn 4 in batch 2). Zero amounts are
-- dropped. CDC is on: every commit also logs what it changed, for customer_balances.
select txn_id, customer_id, amount, ts, txn_date
from {{ ref('transactions') }}
where amount > 0
