# Flink 1.19 and Beam's Flink job server in one image, for the containerised cluster of
# `make flink-up CONTAINERS=1` (engines/flink_containers.py builds it as tfrecord-flink:local).
# Its build context is .engines/flink: the same pinned, checksummed Flink distribution and job
# server jars that `make flink-up` installs, plus container/config.yaml, which flink_containers
# writes from engines/files/flink-config.yaml with the container network's addresses.
# BASE is the project image's base (python:3.10-slim-bookworm, or the stand-in of make image-base);
# in production the official flink:1.19.3-java17 image plays this part.
ARG BASE=python:3.10-slim-bookworm
FROM ${BASE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*
COPY dist/pyflink/bin /opt/flink/bin
COPY dist/pyflink/lib /opt/flink/lib
COPY dist/pyflink/plugins /opt/flink/plugins
COPY dist/pyflink/conf /opt/flink/conf
COPY job-server/lib /opt/beam-job-server/lib
COPY container/config.yaml /opt/flink/conf/config.yaml
ENV FLINK_HOME=/opt/flink PATH=/opt/flink/bin:$PATH
WORKDIR /opt/flink
