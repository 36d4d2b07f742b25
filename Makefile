# make run   — set up .venv from requirements.lock (when missing or stale), run the pipeline
#              on the embedded digits (ARGS="--data PATH ..." to change that)
# make test  — set up .venv the same way, run the test suite
# make compile — recompile the committed example kubeflow/pipeline.json (args: kubeflow/example.args)
# make lock  — re-resolve requirements.in and rewrite requirements.lock
PYTHON ?= python3.10
VENV := .venv
STAMP := $(VENV)/.installed-from-lock
ARGS ?=
PYTEST_ARGS ?=

.PHONY: run test lock bench compile clean

$(STAMP): requirements.lock .python-version
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements.lock
	$(VENV)/bin/python -m pip check
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/python pipeline.py run $(ARGS)

test: $(STAMP)
	$(VENV)/bin/python -m pytest tests $(PYTEST_ARGS)

compile: $(STAMP)
	$(VENV)/bin/python pipeline.py compile $$(cat kubeflow/example.args)

bench: $(STAMP)
	$(VENV)/bin/python -m bench.pipeline_runs

lock:
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet pip==24.2
	.venv-lock/bin/python -m pip install --quiet -r requirements.in
	{ head -2 requirements.lock; .venv-lock/bin/python -m pip freeze --all | grep -v '^-e'; } > requirements.lock.new
	mv requirements.lock.new requirements.lock
	rm -rf .venv-lock

clean:
	rm -rf output
