"""The Qt-free, Spark-free domain: topology documents, formats, rate check, verifier."""
