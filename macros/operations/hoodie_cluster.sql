{#
  dbt run-operation hoodie_cluster --args '{model: orders}'
  dbt run-operation hoodie_cluster --args '{model: orders, mode: schedule}'
  Clusters a lake model's table now (the model's hoodie.clustering.* options): pending
  clustering plans first, then the small file groups are planned and rewritten into fewer,
  sorted ones. mode 'schedule' only writes a plan, which a later run executes. Prints one
  line per clustering.
#}
{% macro hoodie_cluster(model, mode='all') %}
  {% set node = hoodie__find_model(model) %}
  {% set relation = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') %}
  {% set rows = adapter.hoodie_cluster(relation, node.name, node.config, mode) %}
  {% if rows | length == 0 %}
    {{ print("hoodie_cluster: " ~ model ~ " has nothing to cluster") }}
  {% endif %}
  {% for row in rows %}
    {% if row.scheduled %}
      {{ print("clustering %s: planned (run hoodie_cluster again to execute it)" | format(row.instant)) }}
    {% else %}
      {{ print("clustering %s: %s file group(s) into %s, %s records in %ss" | format(
          row.instant, row.file_groups, row.files_written, row.records, row.seconds)) }}
    {% endif %}
  {% endfor %}
  {{ return(rows) }}
{% endmacro %}
