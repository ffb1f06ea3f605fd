{{ config(materialized='cow_upsert', record_key='customer_id') }}

-- A non-partitioned lake table, recomputed from the partitioned one on every run.
select
    customer_id,
    count(*) as transactions,
    cast(sum(amount) as decimal(12, 2)) as total_amount
from {{ ref('transactions') }}
group by customer_id
