{#
  dbt run-operation hoodie_clean --args '{model: orders}'
  Deletes file versions the model's cleaning policy no longer needs (by default the snapshots
  of the last 10 commits stay readable; set options hoodie.cleaner.* on the model to change).
#}
{% macro hoodie_clean(model) %}
  {% set node = hoodie__find_model(model) %}
  {% set relation = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') %}
  {% set result = adapter.hoodie_clean(relation, node.name, node.config) %}
  {% if result.files_deleted == 0 and not result.instant %}
    {{ print("hoodie_clean: " ~ model ~ " has no file versions to clean") }}
  {% else %}
    {{ print("clean %s: %s file(s) deleted; readable from instant %s" | format(
        result.instant, result.files_deleted, result.earliest_retained or "(unchanged)")) }}
  {% endif %}
  {{ return(result) }}
{% endmacro %}
