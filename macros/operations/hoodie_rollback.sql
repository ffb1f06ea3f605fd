{#
  dbt run-operation hoodie_rollback --args '{model: orders}'
  dbt run-operation hoodie_rollback --args '{model: orders, instant: "20261121093000123"}'
  Rolls back the table's latest completed commit (if given, `instant` must be that commit):
  its files are deleted and readers see the table as it was before it.
#}
{% macro hoodie_rollback(model, instant=none) %}
  {% set node = hoodie__find_model(model) %}
  {% set relation = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') %}
  {% set result = adapter.hoodie_rollback(relation, node.name, node.config, instant) %}
  {{ print("rollback %s: rolled back %s, %s file(s) deleted" | format(
      result.instant, result.rolled_back, result.files_deleted)) }}
  {{ return(result) }}
{% endmacro %}
