{#
  dbt run-operation hoodie_compact --args '{model: orders}'
  Compacts a mor_upsert model's table now: pending compaction plans first, then every file
  slice with log files is folded into a new base file. Prints one line per compaction.
#}
{% macro hoodie_compact(model) %}
  {% set node = hoodie__find_model(model) %}
  {% set relation = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') %}
  {% set rows = adapter.hoodie_compact(relation, node.name, node.config) %}
  {% if rows | length == 0 %}
    {{ print("hoodie_compact: " ~ model ~ " has no log files to compact") }}
  {% endif %}
  {% for row in rows %}
    {{ print("compaction %s: %s file group(s), %s records, %s log file(s) compacted in %ss" | format(
        row.instant, row.file_groups, row.records, row.log_files_compacted, row.seconds)) }}
  {% endfor %}
  {{ return(rows) }}
{% endmacro %}
