{#
  dbt run-operation hoodie_upgrade --args '{model: orders}'
  Upgrades a model's lake table from Hudi table version 6 (Apache Hudi 0.x) to version 8
  (Hudi 1.x), as Hudi's own upgrade does: failed writes are rolled back, a mor_upsert table's
  log files compacted, the timeline and archive moved to Hudi 1.x's layout, hoodie.properties
  rewritten last. Readers see the whole table at every step; if the upgrade is interrupted,
  run it again. Stop the model's other writers first. On a version 8 table it finishes an
  interrupted upgrade, or does nothing.
#}
{% macro hoodie_upgrade(model, version=none) %}
  {% set node = hoodie__find_model(model) %}
  {% set relation = api.Relation.create(schema=node.schema, identifier=node.alias, type='table') %}
  {% set result = adapter.hoodie_upgrade(relation, node.name, node.config, version) %}
  {% if result.from_version == result.to_version %}
    {{ print("hoodie_upgrade: " ~ model ~ " is already table version " ~ result.to_version) }}
  {% else %}
    {{ print("upgraded %s from table version %s to %s: %s timeline file(s) and %s archived instant(s) moved" | format(
        model, result.from_version, result.to_version, result.timeline_files, result.archived_instants)) }}
  {% endif %}
  {{ return(result) }}
{% endmacro %}
