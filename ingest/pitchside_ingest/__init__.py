"""pitchside lakehouse ingest: gateway Parquet files -> Delta tables.

Data flow::

    bucket/{table}/venue_id=V/date=D/{gateway}-{seq}.parquet   (written by pitchside)
        │  Auto Loader (cloudFiles) or the plain Spark file source   │  pyarrow listing
        ▼                                                           ▼
    spark_job: foreachBatch ─ spark_batch.enrich/dedup      local_runner: arrow_batch.enrich/dedup
        │  Delta MERGE (spark_sinks.DeltaSink)                      │  delta-rs MERGE
        │  or MERGE-equivalent Parquet (spark_sinks.ParquetSink)    │
        ▼                                                           ▼
    Delta tables (ddl/), views (views/*.sql)                local Delta tables

Module map:

* `tables`       — the catalogue: columns, keys, merge mode per table
* `merge`        — the MERGE semantics both engines share (predicates, order, SQL)
* `ddl`          — Delta DDL generated from the catalogue
* `views`        — the analyses as SQL views
* `arrow_batch`  — pyarrow: read a gateway file, enrich, de-duplicate
* `local_runner` — delta-rs runner for users without a cluster (CLI)
* `spark_batch`  — Spark: schema, enrich, de-duplicate a micro-batch
* `spark_sinks`  — where a micro-batch goes: Delta MERGE or Parquet tables
* `spark_job`    — the streaming job (CLI for spark-submit, `run()` for notebooks)
"""
