{#
  dbt run-operation hoodie_restore --args '{model: orders}'
  dbt run-operation hoodie_restore --args '{model: orders, instant: "20261121093000123"}'
  Restores the table to a savepoint (default: the latest): every commit after it is rolled
  back (one restore instant records them).
#}
{% macro hoodie_restore(model, instant=none) %}
  {% set node = hoodie__find_model(model) %}
  {% set relation = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') %}
  {% set result = adapter.hoodie_restore(relation, node.name, node.config, instant) %}
  {{ print("restore %s: rolled back %s" | format(result.instant, result.rolled_back)) }}
  {{ return(result) }}
{% endmacro %}
