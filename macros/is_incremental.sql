{#
  dbt's is_incremental() is true only for materialized='incremental'. Lake tables are
  incremental by nature: on any run after the first (and not a full refresh) a model can
  filter its input to new rows.
#}
{% macro is_incremental() %}
  {% if not execute %}
    {{ return(False) }}
  {% else %}
    {% set relation = adapter.get_relation(this.database, this.schema, this.table) %}
    {{ return(relation is not none
              and relation.type == 'table'
              and model.config.materialized in ('incremental', 'cow_upsert', 'mor_upsert')
              and not hoodie_full_refresh()) }}
  {% endif %}
{% endmacro %}
