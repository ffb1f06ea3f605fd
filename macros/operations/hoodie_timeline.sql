{#
  dbt run-operation hoodie_timeline --args '{model: orders}'
  Prints the lake table's instants: time, action, state, completion time (table version 8;
  version 6 timelines keep none) and rows written.
#}
{% macro hoodie_timeline(model) %}
  {% set node = hoodie__find_model(model) %}
  {% set relation = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') %}
  {% set rows = adapter.hoodie_timeline(relation, node.name, node.config) %}
  {{ print("instant            action         state                completed          rows_written") }}
  {% for row in rows %}
    {{ print("%-18s %-14s %-20s %-18s %s" | format(row.instant, row.action, row.state, row.completed, row.rows_written)) }}
  {% endfor %}
  {{ return(rows) }}
{% endmacro %}

{% macro hoodie__find_model(name) %}
  {% for node in graph.nodes.values() if node.resource_type == 'model' and node.name == name %}
    {{ return(node) }}
  {% endfor %}
  {{ exceptions.raise_compiler_error("hoodie: no model named '" ~ name ~ "' in this project") }}
{% endmacro %}
