{#-
  dbt-spark's own materializations and seeds with file_format='hudi' (or 'hoodie') would ask
  Spark for Apache Hudi's JVM data source, which this adapter does not load: the model would
  fail deep in Spark with DATA_SOURCE_NOT_FOUND (a `table` model after dbt-spark dropped the old
  table). dbt-hoodie writes Hudi tables itself, through its own materializations, so a model or
  seed asking dbt-spark for one is refused before anything is touched, saying what to write
  instead. Every other file format goes to dbt-spark unchanged.
-#}

{% macro hoodie_refuse_spark_hudi_format() %}
  {%- set file_format = config.get('file_format') -%}
  {%- if file_format is not none and file_format | lower in ('hudi', 'hoodie') -%}
    {%- if model.resource_type == 'seed' -%}
      {%- set what = "seeds are plain Spark tables: remove file_format, and build a cow_upsert "
                     ~ "model that selects from the seed" -%}
    {%- else -%}
      {%- set what = "use materialized='cow_upsert' (or 'mor_upsert') with record_key='<key "
                     ~ "column>': it creates the table on the first run and upserts after, and "
                     ~ "--full-refresh rebuilds it" -%}
    {%- endif -%}
    {{ adapter.hoodie_raise('ModelConfigError',
      (model.resource_type | capitalize) ~ " '" ~ model.name ~ "': file_format='" ~ file_format
      ~ "' with materialized='" ~ config.get('materialized') ~ "' is dbt-spark's Hudi table, "
      ~ "which needs Apache Hudi's Spark bundle; dbt-hoodie writes Hudi tables itself: " ~ what) }}
  {%- endif -%}
{% endmacro %}

{% macro hoodie__file_format_clause() %}
  {% do hoodie_refuse_spark_hudi_format() %}
  {{ return(spark__file_format_clause()) }}
{% endmacro %}

{#- dbt-spark's `table` drops the old table before it builds the new one: refuse first. -#}
{% materialization table, adapter='hoodie', supported_languages=['sql', 'python'] %}
  {% do hoodie_refuse_spark_hudi_format() %}
  {{ return(materialization_table_spark()) }}
{% endmaterialization %}
