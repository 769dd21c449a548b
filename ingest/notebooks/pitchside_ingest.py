# Databricks notebook source
# MAGIC %md
# MAGIC # pitchside ingest
# MAGIC Merges the gateways' Parquet files into the Delta tables of `ingest/ddl/` with
# MAGIC Auto Loader → `foreachBatch` → `MERGE INTO`. See `ingest/README.md`.
# MAGIC Run it as a scheduled job: each run merges what arrived since the last one and stops.

# COMMAND ----------

dbutils.widgets.text("source", "s3://venue-bucket/pitchside", "Gateway store")
dbutils.widgets.text("target", "main.pitchside", "Target schema")
dbutils.widgets.text("checkpoint", "s3://venue-bucket/_checkpoints/pitchside", "Checkpoints")
dbutils.widgets.dropdown("continuous", "false", ["false", "true"], "Run continuously")
dbutils.widgets.dropdown("create", "true", ["false", "true"], "Create tables and views")

# COMMAND ----------

import os
import sys

# This notebook lives in ingest/notebooks/ of the Git folder; the package is in ingest/.
sys.path.insert(0, os.path.abspath(".."))

from pitchside_ingest.spark_job import JobOptions, run

# COMMAND ----------

create = dbutils.widgets.get("create") == "true"
rows = run(
    spark,
    JobOptions(
        source=dbutils.widgets.get("source"),
        target=dbutils.widgets.get("target"),
        checkpoint=dbutils.widgets.get("checkpoint"),
        available_now=dbutils.widgets.get("continuous") != "true",
        create_tables=create,
        create_views=create,
    ),
)
display(spark.createDataFrame(sorted(rows.items()), "table STRING, rows_read BIGINT"))
