{{ config(
    materialized='mor_upsert',
    record_key='customer_id',
    compaction='off',
    options={'hoodie.parquet.small.file.limit': '0'},
) }}

-- Keeps each customer's balance from cleaned_transactions' change log, exactly once: every
-- run reads only the changes since the position this table's last commit recorded
-- (hoodie_incremental), and commits its new position with its rows. An insert adds its
-- amount, a delete subtracts it, an update subtracts the old amount and adds the new one (for
-- the customer each belonged to). On the first run every row counts as an insert.
-- A merge-on-read table: a run appends its balances to log files (new customers go to a new
-- file group: with the small-file limit at 0 no base file is rewritten to take them);
-- `dbt run-operation hoodie_compact --args '{model: customer_balances}'` folds the logs into
-- new base files.
with changes as (
    select * from {{ hoodie_incremental(ref('cleaned_transactions'), format='cdc') }}
),
signed as (
    select before.customer_id as customer_id, -before.amount as amount, -1 as transactions
    from changes where before is not null
    union all
    select after.customer_id, after.amount, 1
    from changes where after is not null
),
deltas as (
    select customer_id, sum(amount) as amount, sum(transactions) as transactions
    from signed group by customer_id
),
balances as (
    select
        d.customer_id,
        cast({% if is_incremental() %}coalesce(b.balance, 0) + {% endif %}d.amount
             as decimal(12, 2)) as balance,
        cast({% if is_incremental() %}coalesce(b.transactions, 0) + {% endif %}d.transactions
             as bigint) as transactions
    from deltas d
    {% if is_incremental() %}
    left join {{ this }} b on b.customer_id = d.customer_id
    {% endif %}
)
-- A customer left with no transaction is deleted, as a rebuild would not have it.
select *, transactions = 0 as _hoodie_is_deleted from balances
