{#
  snapshot: dbt snapshots whose table is an Apache Hudi copy-on-write table.

  Everything but the write is dbt's own: the strategy (timestamp, check or a custom one, via
  strategy_dispatch), the first run's query (build_snapshot_table) and later runs' staging
  query (snapshot_staging_table), with hard_deletes, dbt_valid_to_current and custom
  snapshot_meta_column_names. Our lake tables are read-only from SQL, so dbt's MERGE INTO is
  replaced by the adapter's hoodie_snapshot_merge, an upsert keyed by the scd id column.
  Config on top of dbt's: location_root, options (raw hoodie.* settings); file_format may
  only be 'hudi'.
#}
{% materialization snapshot, adapter='hoodie' %}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set columns = config.get('snapshot_table_column_names') or get_snapshot_table_column_names() -%}

  {#-- Unlike a model's, a snapshot's table holds history: never replace another object. --#}
  {% if existing_relation is not none
        and (existing_relation.type != 'table' or not adapter.hoodie_is_lake_table(existing_relation)) %}
    {%- set what = 'a table of another format' if existing_relation.type == 'table'
                   else 'a ' ~ existing_relation.type -%}
    {% do adapter.hoodie_raise('NotALakeTableError',
        "Snapshot '" ~ model['name'] ~ "': " ~ existing_relation ~ " exists and is " ~ what
        ~ ", not a hoodie lake table. Snapshots on the hoodie adapter keep their history in a "
        ~ "Hudi copy-on-write table and never replace another object: drop it (after copying "
        ~ "what you need), or give the snapshot another alias") %}
  {% endif %}

  {%- set target_exists = adapter.hoodie_snapshot_prepare(model, target_relation, columns) -%}
  {#-- registered again from its lake files: later lookups (the check strategy's) must see it --#}
  {% if target_exists and existing_relation is none %}
    {% do adapter.cache_added(target_relation) %}
  {% endif %}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {%- set strategy_macro = strategy_dispatch(config.get('strategy')) -%}
  {%- set strategy = strategy_macro(
        model, 'snapshotted_data', 'source_data', model['config'], target_exists) -%}

  {#-- The snapshot's node goes over whole: persist_docs registers its docs with the catalog
       table, as a model's --#}
  {% if target_exists %}
    {% do adapter.assert_valid_snapshot_target_given_strategy(target_relation, columns, strategy) %}
    {%- set staging_sql = snapshot_staging_table(strategy, model['compiled_code'], target_relation) -%}
    {%- set response = adapter.hoodie_snapshot_merge(
          model, target_relation, staging_sql, columns) -%}
  {% else %}
    {%- set build_sql = build_snapshot_table(strategy, model['compiled_code']) -%}
    {%- set response = adapter.hoodie_snapshot_create(
          model, target_relation, build_sql, columns) -%}
    {% do adapter.cache_added(target_relation) if existing_relation is none %}
  {% endif %}
  {% do store_result('main', response=response) %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{#
  dbt's contract for the get_columns_in_relation macro is a list of columns (dbt-core's own
  snapshot_staging_table reads their names for hard_deletes='new_record'), but dbt-spark's
  returns the raw `describe extended` table, whose rows have no `name`: every column of a
  deletion record then came from the (absent) source row, all null. The adapter method returns
  real columns, without Hudi's meta columns.
#}
{% macro hoodie__get_columns_in_relation(relation) -%}
  {{ return(adapter.get_columns_in_relation(relation)) }}
{%- endmacro %}
