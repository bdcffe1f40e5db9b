# neurodyn: `make demo` trains a 3-bit flip-flop RNN and analyses its fixed points; `make test` runs the
# whole test suite; `make docs` builds the documentation site into site/; `make notebooks` writes a Jupyter
# notebook of each gallery page into notebooks/. All create the virtual environment first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
EXTRAS ?= dev,docs,gpu,ot,nwb,dist
STAMP := $(VENV)/.installed
RUN ?= runs/flipflop

.PHONY: install demo test test-fast lint bench docs notebooks clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $(STAMP)

demo: install
	$(BIN)/neurodyn train flipflop --n-bits 3 --n-units 64 --alpha 1.0 --n-iterations 1500 \
		--target-accuracy 1.0 --seed 0 --out $(RUN)/model.pt --overwrite
	$(BIN)/neurodyn fixedpoints $(RUN)/model.pt --n-inits 1024 --seed 0 \
		--out $(RUN)/fixedpoints.nc --plot $(RUN)/fixedpoints.png --overwrite

# one test process per core (pytest-xdist), at most four; each process runs its BLAS on one thread
test: install
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist worksteal

test-fast: install
	$(BIN)/python -m pytest -q -m "not slow"

lint: install
	$(BIN)/ruff check neurodyn tests benchmarks examples docs

docs: install
	$(BIN)/mkdocs build --strict

# the gallery pages (jupytext percent-format, their one source) as notebooks, outputs not included
notebooks: install
	mkdir -p notebooks
	for page in docs/gallery/*.py; do \
		$(BIN)/jupytext --quiet --to ipynb --set-kernel python3 -o notebooks/$$(basename $$page .py).ipynb $$page \
		|| exit 1; done

bench: install
	$(BIN)/python benchmarks/run_all.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) runs .pytest_cache site .cache notebooks
