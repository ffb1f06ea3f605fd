{#
  dbt run-operation hoodie_compact --args '{model: orders}'
  dbt run-operation hoodie_compact --args '{model: orders, mode: schedule}'
  Compacts a mor_upsert model's table now. mode 'all' (the default): pending compaction plans
  first, then every file slice with log files is folded into a new base file; 'schedule':
  only write a plan and leave it pending; 'run_pending': only execute the pending plans (those
  'schedule' or compaction='schedule' wrote), as Apache Hudi's async compaction does. Prints
  one line per compaction.
#}
{% macro hoodie_compact(model, mode='all') %}
  {% set node = hoodie__find_model(model) %}
  {% set relation = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') %}
  {% set rows = adapter.hoodie_compact(relation, node.name, node.config, mode) %}
  {% if rows | length == 0 %}
    {{ print("hoodie_compact: " ~ model ~ " has nothing to compact (mode " ~ mode ~ ")") }}
  {% endif %}
  {% for row in rows %}
    {% if row.scheduled %}
      {{ print("compaction %s: scheduled, pending (run it with mode run_pending)" | format(row.instant)) }}
    {% else %}
      {{ print("compaction %s: %s file group(s), %s records, %s log file(s) compacted in %ss" | format(
          row.instant, row.file_groups, row.records, row.log_files_compacted, row.seconds)) }}
    {% endif %}
  {% endfor %}
  {{ return(rows) }}
{% endmacro %}
