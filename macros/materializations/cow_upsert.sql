{#
  cow_upsert: upsert the model's rows into an Apache Hudi copy-on-write table.
  Config: record_key (required), partition_path, precombine_field, hive_style_partitioning,
  location_root, options (raw hoodie.* settings). See the README for the full table.
#}
{% materialization cow_upsert, adapter='hoodie' %}
  {{ return(hoodie__lake_upsert('COPY_ON_WRITE')) }}
{% endmaterialization %}
