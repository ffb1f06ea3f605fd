{#
  The body shared by the lake materializations. It only glues dbt to the adapter: the
  adapter's `hoodie_upsert` hook runs the model's SQL, upserts the rows into the Hudi table
  and registers the table in the Spark catalog.
#}
{% macro hoodie__lake_upsert(table_type) %}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set full_refresh = hoodie_full_refresh() -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {#-- An enforced contract is checked before anything is written or dropped: dbt's own check
       of column names and data types, then the constraints (not_null is checked on the rows
       by hoodie_upsert, other kinds are refused). The table's columns follow the contract. --#}
  {%- set sql = model['compiled_code'] -%}
  {%- set not_null = [] -%}
  {% if config.get('contract').enforced %}
    {% do get_assert_columns_equivalent(sql) %}
    {%- set not_null = adapter.hoodie_contract_not_null(
          model['name'], config.get('materialized'), model['columns'], model['constraints']) -%}
    {%- set sql = get_select_subquery(sql) -%}
  {% endif %}

  {#-- A view, or a table of another format, under this name makes way for the lake table. --#}
  {%- set replacing = none -%}
  {% if existing_relation is not none
        and (existing_relation.type != 'table' or not adapter.hoodie_is_lake_table(existing_relation)) %}
    {%- set replacing = existing_relation -%}
  {% endif %}

  {#-- The model (its name, config and docs: persist_docs registers the docs with the catalog
       table) goes over whole; the rest is what this run decided. --#}
  {%- set response = adapter.hoodie_upsert(
        model, target_relation, sql, table_type=table_type, full_refresh=full_refresh,
        not_null=not_null, replacing=replacing) -%}
  {% do store_result('main', response=response) %}
  {% do adapter.cache_added(target_relation) if existing_relation is none or replacing is not none %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {{ return({'relations': [target_relation]}) }}
{% endmacro %}
