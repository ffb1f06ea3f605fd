{#
  dbt run-operation hoodie_timeline --args '{model: orders}'
  Prints the lake table's instants: time, action, state, completion time (a column only for
  table version 8: version 6 timelines keep none), the records each write inserted, updated
  and deleted, and rows_written: the records in the files it wrote (Apache Hudi's numWrites;
  a copy-on-write update rewrites the other records of its file groups too).
#}
{% macro hoodie_timeline(model) %}
  {% set node = hoodie__find_model(model) %}
  {% set relation = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') %}
  {% set rows = adapter.hoodie_timeline(relation, node.name, node.config) %}
  {#- the completion time column only where the timeline keeps one (version 8) -#}
  {% set completed = rows | selectattr('completed') | list | length > 0 %}
  {% set header = "%-18s %-14s %-20s " | format("instant", "action", "state") %}
  {% if completed %}{% set header = header ~ "%-18s " | format("completed") %}{% endif %}
  {{ print(header ~ "%9s %9s %9s %12s" | format("inserts", "updates", "deletes", "rows_written")) }}
  {% for row in rows %}
    {% set line = "%-18s %-14s %-20s " | format(row.instant, row.action, row.state) %}
    {% if completed %}{% set line = line ~ "%-18s " | format(row.completed) %}{% endif %}
    {{ print(line ~ "%9s %9s %9s %12s" | format(row.inserts, row.updates, row.deletes, row.rows_written)) }}
  {% endfor %}
  {{ return(rows) }}
{% endmacro %}

{% macro hoodie__find_model(name) %}
  {% for node in graph.nodes.values() if node.resource_type == 'model' and node.name == name %}
    {{ return(node) }}
  {% endfor %}
  {{ adapter.hoodie_raise('OperationArgumentError', "hoodie: no model named '" ~ name ~ "' in this project") }}
{% endmacro %}
