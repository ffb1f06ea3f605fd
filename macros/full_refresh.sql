{#
  Is this run of the model a full refresh? --full-refresh (or the model's full_refresh
  config), or, for a lake model with on_checkpoint_lost='full_refresh', a checkpoint of an
  upstream it reads with hoodie_incremental that is lost (the upstream was restored or
  rolled back past it or rebuilt under the same path, or a `cdc` read's history was
  cleaned): then the model is rebuilt from its upstreams.
  is_incremental(), the lake materializations and hoodie_incremental all ask this.
#}
{% macro hoodie_full_refresh() %}
  {{ return(should_full_refresh() or adapter.hoodie_checkpoints_lost(model, this)) }}
{% endmacro %}
