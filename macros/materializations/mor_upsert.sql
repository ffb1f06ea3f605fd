{#
  mor_upsert: upsert the model's rows into an Apache Hudi merge-on-read table.
  Updates and deletes are appended to log files; inserts go to new base files. Same config as
  cow_upsert, plus compaction ('inline', the default, or 'off') and compaction_delta_commits
  (default 5): after that many delta commits the logs are compacted into new base files.
#}
{% materialization mor_upsert, adapter='hoodie' %}
  {{ return(hoodie__lake_upsert('MERGE_ON_READ')) }}
{% endmaterialization %}
