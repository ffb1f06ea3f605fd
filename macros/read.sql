{#
  Reading a lake table at an instant, its changes, or its latest snapshot, from a model:

    select * from {{ hoodie_as_of(ref('orders'), '2026-11-20 10:00:00') }}
    select * from {{ hoodie_changes(ref('orders'), '20261120100000000') }}
    select * from {{ hoodie_snapshot(ref('orders')) }}

  Instants are yyyyMMddHHmmssSSS, 'yyyy-MM-dd HH:mm:ss' or yyyy-MM-dd (UTC). Each call
  renders the name of a temporary view of the table read with Hudi's read options, planned
  when the model runs; where nothing needs merging, Spark's own parquet reader scans it.
#}
{% macro hoodie_as_of(relation, instant) %}
  {%- if not execute -%}{{ return(relation) }}{%- endif -%}
  {{ return(adapter.hoodie_read_view(relation, {'as.of.instant': instant | string})) }}
{% endmacro %}

{% macro hoodie_changes(relation, begin_instant, end_instant=none) %}
  {%- if not execute -%}{{ return(relation) }}{%- endif -%}
  {%- set options = {
        'hoodie.datasource.query.type': 'incremental',
        'hoodie.datasource.read.begin.instanttime': begin_instant | string,
      } -%}
  {%- if end_instant is not none -%}
    {%- do options.update({'hoodie.datasource.read.end.instanttime': end_instant | string}) -%}
  {%- endif -%}
  {{ return(adapter.hoodie_read_view(relation, options)) }}
{% endmacro %}

{#
    select op, ts_ms, record_key, before.amount as was, after.amount as now
    from {{ hoodie_cdc(ref('orders'), '20261120100000000') }}

  Every change the writes after begin_instant (exclusive) up to end_instant (inclusive,
  default the latest) made to a lake table created with hoodie.table.cdc.enabled: op (i, u,
  d), ts_ms (the write's instant), record_key, partition_path, and before / after as structs
  of the table's columns (null where there is no image). Apache Hudi's CDC query, images
  parsed; a range is by the writes' instant times.
#}
{% macro hoodie_cdc(relation, begin_instant, end_instant=none) %}
  {%- if not execute -%}{{ return(relation) }}{%- endif -%}
  {%- set end = none if end_instant is none else end_instant | string -%}
  {{ return(adapter.hoodie_cdc_view(relation, begin_instant | string, end)) }}
{% endmacro %}

{% macro hoodie_snapshot(relation) %}
  {%- if not execute -%}{{ return(relation) }}{%- endif -%}
  {{ return(adapter.hoodie_read_view(relation, {})) }}
{% endmacro %}

{#
    select * from {{ hoodie_incremental(ref('orders')) }}
    select op, before.amount, after.amount from {{ hoodie_incremental(ref('orders'), format='cdc') }}

  What a lake table changed since this model last read it, exactly once: the position read
  up to is committed with this model's write (see the README). format='latest_state' gives
  the latest version of each changed row (deletes are not seen); format='cdc' every change as
  hoodie_cdc gives it (op, ts_ms, record_key, partition_path, before, after; the upstream
  logs them with hoodie.table.cdc.enabled). On the first run and on --full-refresh, the whole
  table (with 'cdc': every row an insert). For lake models only; on_checkpoint_lost=
  'full_refresh' rebuilds the model when its position is lost (the upstream restored past it,
  or cleaning removed the history a 'cdc' read needs) instead of failing.
#}
{% macro hoodie_incremental(relation, format='latest_state') %}
  {%- if not execute -%}{{ return(relation) }}{%- endif -%}
  {{ return(adapter.hoodie_incremental_view(model, this, relation, format, hoodie_full_refresh())) }}
{% endmacro %}
