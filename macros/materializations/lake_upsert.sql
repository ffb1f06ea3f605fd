{#
  The body shared by the lake materializations. It only glues dbt to the adapter: the
  adapter's `hoodie_upsert` hook runs the model's SQL, upserts the rows into the Hudi table
  and registers the table in the Spark catalog.
#}
{% macro hoodie__lake_upsert(table_type) %}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set full_refresh = should_full_refresh() -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {#-- A view, or a table of another format, under this name makes way for the lake table. --#}
  {% if existing_relation is not none
        and (existing_relation.type != 'table' or not adapter.hoodie_is_lake_table(existing_relation)) %}
    {{ log("Replacing " ~ existing_relation ~ " (not a hoodie lake table) with one", info=True) }}
    {% do adapter.drop_relation(existing_relation) %}
  {% endif %}

  {#-- persist_docs: the model's docs are registered with the catalog table. --#}
  {%- set response = adapter.hoodie_upsert(
        target_relation, model['compiled_code'], model['name'], model['config'],
        table_type, full_refresh, model.get('description'), model.get('columns')) -%}
  {% do store_result('main', response=response) %}
  {% do adapter.cache_added(target_relation) if existing_relation is none %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {{ return({'relations': [target_relation]}) }}
{% endmacro %}
