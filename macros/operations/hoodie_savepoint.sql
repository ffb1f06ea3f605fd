{#
  dbt run-operation hoodie_savepoint --args '{model: orders}'
  dbt run-operation hoodie_savepoint --args '{model: orders, instant: "20261121093000123"}'
  Pins the snapshot of a completed commit (default: the latest): cleaning keeps its files and
  hoodie_restore can bring the table back to it.
#}
{% macro hoodie_savepoint(model, instant=none) %}
  {% set node = hoodie__find_model(model) %}
  {% set relation = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') %}
  {% set result = adapter.hoodie_savepoint(relation, node.name, node.config, instant) %}
  {{ print("savepoint %s: %s file(s) pinned" | format(result.instant, result.files)) }}
  {{ return(result) }}
{% endmacro %}
