# make run   — set up .venv from requirements.lock (when missing or stale), run the pipeline
#              on the embedded digits (ARGS="--data PATH ..." to change that)
# make test  — set up .venv the same way, run the whole test suite (the engine tests last, alone)
# make test-fast — the same without the end-to-end tests marked `slow` (the inner loop)
# make lint  — ruff: lint and format check (pyproject.toml); make format rewrites the files
# make gpu-check — on a machine with an NVIDIA GPU: add TensorFlow's CUDA libraries
#              (requirements-gpu.lock) to .venv, run bench.gpu_check (ARGS="--json OUT ...";
#              it also runs pipeline.py on ResNet-50: --product-steps 0 leaves that out)
# make compile — recompile the committed example kubeflow/pipeline.json (args: kubeflow/example.args)
# make flink-up — a local Flink 1.19 cluster (JobManager + web UI on localhost:8081, 2 TaskManagers),
#              Beam's job server and an SDK worker pool, from pinned and checksummed artifacts
#              (engines/); then `pipeline.py run --beam-runner FlinkRunner --flink-master localhost:8081`
#              CONTAINERS=1: the same in containers on a Docker network (the SDK workers in the
#              project's image, data and pipeline root on the cluster's S3 server; engines/flink_containers.py)
# make flink-down — stop all of it, either kind (no process, container or network left behind)
# make spark-up / spark-down — the same for Spark 3.5 standalone (master spark://localhost:7077,
#              web UI localhost:8080, one worker); then --beam-runner SparkRunner --spark-master …
# make lock  — re-resolve requirements.in and rewrite requirements.lock and requirements-runtime.lock
# make image — build kubeflow/Dockerfile with Docker as $(IMAGE) (tfrecord-pipeline:local; GPU=1 adds
#              requirements-gpu.lock, tag ...:local-gpu); its BASE is python:3.10-slim-bookworm, or the
#              stand-in of make image-base where that exists (no registry reachable)
# make image-base — the stand-in base: Debian bookworm (mmdebstrap) + this machine's Python 3.10
PYTHON ?= python3.10
VENV := .venv
STAMP := $(VENV)/.installed-from-lock
ARGS ?=
PYTEST_ARGS ?=
# Two pytest workers: pipeline runs are mostly one busy core (Beam in_memory, imports, TFMA).
TEST_WORKERS ?= 2
PYTEST := $(VENV)/bin/python -m pytest -n $(TEST_WORKERS) --dist loadgroup

.PHONY: run test test-fast lint format lock bench gpu-check compile clean flink-up flink-down spark-up spark-down image image-base

DOCKER ?= docker
IMAGE ?= tfrecord-pipeline:local$(if $(GPU),-gpu)
BASE_STANDIN := tfrecord-pipeline-base:py3.10
OFFICIAL_BASE := python:3.10-slim-bookworm
BEAM_VERSION := $(shell sed -n 's/^apache-beam==//p' requirements.lock)

$(STAMP): requirements.lock .python-version
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements.lock
	$(VENV)/bin/python -m pip check
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/python pipeline.py run $(ARGS)

# The engine tests (a Flink and a Spark cluster on this machine's 2 cores) run after the rest, on
# their own: beside another pytest worker's pipeline runs, SDK workers were seen to time out.
ENGINE_TESTS := tests/engines tests/bench/test_engines.py tests/bench/test_warm_cluster.py
test: $(STAMP)
	$(PYTEST) tests $(foreach t,$(ENGINE_TESTS),--ignore=$(t)) $(PYTEST_ARGS)
	$(VENV)/bin/python -m pytest -p no:xdist $(ENGINE_TESTS) $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(PYTEST) tests -m 'not slow' $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

compile: $(STAMP)
	$(VENV)/bin/python pipeline.py compile $$(cat kubeflow/example.args)

bench: $(STAMP)
	$(VENV)/bin/python -m bench.pipeline_runs

$(VENV)/.installed-gpu-extras: $(STAMP) requirements-gpu.lock
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-gpu.lock
	touch $@

gpu-check: $(VENV)/.installed-gpu-extras
	$(VENV)/bin/python -m bench.gpu_check $(ARGS)

lock:
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet pip==24.2
	.venv-lock/bin/python -m pip install --quiet -r requirements.in
	{ head -2 requirements.lock; .venv-lock/bin/python -m pip freeze --all | grep -v '^-e'; } > requirements.lock.new
	mv requirements.lock.new requirements.lock
	rm -rf .venv-lock
	$(MAKE) $(STAMP)
	$(VENV)/bin/python -m kubeflow.runtime_lock

flink-up: $(STAMP) $(if $(CONTAINERS),image)
	$(VENV)/bin/python -m engines.$(if $(CONTAINERS),flink_containers,flink) up

# Needs no .venv: stopping uses the standard library only.
flink-down:
	$(if $(wildcard $(VENV)/bin/python),$(VENV)/bin/python,python3) -m engines.flink down
	$(if $(shell command -v $(DOCKER)),$(if $(wildcard $(VENV)/bin/python),$(VENV)/bin/python,python3) -m engines.flink_containers down)

spark-up: $(STAMP)
	$(VENV)/bin/python -m engines.spark up

spark-down:
	$(if $(wildcard $(VENV)/bin/python),$(VENV)/bin/python,python3) -m engines.spark down

clean:
	rm -rf output

image-base:
	kubeflow/base_image.sh $(BASE_STANDIN)

# Beam's SDK-harness boot program, the image's entrypoint, built from Beam's Go module (static).
.build/beam-boot: requirements.lock
	mkdir -p .build
	CGO_ENABLED=0 GOBIN=$(abspath .build) go install -trimpath -ldflags='-s -w' github.com/apache/beam/sdks/v2/python/container@v$(BEAM_VERSION)
	mv .build/container $@

image: .build/beam-boot
	base=$$($(DOCKER) image inspect $(BASE_STANDIN) >/dev/null 2>&1 && echo $(BASE_STANDIN) || echo $(OFFICIAL_BASE)); \
	echo "image $(IMAGE) on $$base"; \
	$(DOCKER) build -f kubeflow/Dockerfile --build-arg BASE=$$base --label base=$$base \
	  $(if $(GPU),--build-arg LOCKS="requirements-runtime.lock requirements-gpu.lock") -t $(IMAGE) .
	@$(DOCKER) image inspect $(IMAGE) --format '{{.Size}}' | awk '{printf "image $(IMAGE): %.2f GB\n", $$1/1e9}'
