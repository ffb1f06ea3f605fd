{#
  materialized='incremental': dbt-spark's materialization, unless the model asks for a lake
  table (file_format='hudi'), which then upserts as cow_upsert / mor_upsert do (table_type
  'cow', the default, or 'mor'). dbt-core batches only materialized='incremental' models, so
  this is how a lake model runs incremental_strategy='microbatch' (each batch one commit that
  replaces the batch's event-time window).
#}
{% materialization incremental, adapter='hoodie' %}
  {%- set file_format = config.get('file_format') -%}
  {% if file_format is not none and file_format | lower in ('hudi', 'hoodie') %}
    {{ return(hoodie__lake_upsert(adapter.hoodie_table_type(model))) }}
  {% endif %}
  {{ return(materialization_incremental_spark()) }}
{% endmaterialization %}
