"""spark-submit entry point of the ingest job: `spark-submit ingest/run_ingest.py --help`.

Python puts this file's folder on sys.path, so `pitchside_ingest` imports from
beside it; on a cluster in deploy mode ship the package with `--py-files`.
"""

from pitchside_ingest.spark_job import main

if __name__ == "__main__":
    main()
