{#
  dbt run-operation hoodie_timeline --args '{model: orders}'
  Prints the lake table's instants: time, action, state, completion time (a column only for
  table version 8: version 6 timelines keep none) and rows written.
#}
{% macro hoodie_timeline(model) %}
  {% set node = hoodie__find_model(model) %}
  {% set relation = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') %}
  {% set rows = adapter.hoodie_timeline(relation, node.name, node.config) %}
  {#- the completion time column only where the timeline keeps one (version 8) -#}
  {% set completed = rows | selectattr('completed') | list | length > 0 %}
  {% if completed %}
    {{ print("instant            action         state                completed          rows_written") }}
  {% else %}
    {{ print("instant            action         state                rows_written") }}
  {% endif %}
  {% for row in rows %}
    {% if completed %}
      {{ print("%-18s %-14s %-20s %-18s %s" | format(row.instant, row.action, row.state, row.completed, row.rows_written)) }}
    {% else %}
      {{ print("%-18s %-14s %-20s %s" | format(row.instant, row.action, row.state, row.rows_written)) }}
    {% endif %}
  {% endfor %}
  {{ return(rows) }}
{% endmacro %}

{% macro hoodie__find_model(name) %}
  {% for node in graph.nodes.values() if node.resource_type == 'model' and node.name == name %}
    {{ return(node) }}
  {% endfor %}
  {{ exceptions.raise_compiler_error("hoodie: no model named '" ~ name ~ "' in this project") }}
{% endmacro %}
