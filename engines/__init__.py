"""Local clusters of the engines Beam runs on past one machine (Flink, Spark), started and
stopped by the project's own files, and the Beam arguments that send the pipeline's Beam work to
them."""
