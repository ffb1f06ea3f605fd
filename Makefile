# dbt-hoodie developer commands. `make demo` and `make test` work from a fresh clone.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Spark's Python workers must run the interpreter that has dbt-hoodie installed.
export PYSPARK_PYTHON := $(abspath $(BIN)/python)
# Python's bytecode cache: an environment may turn it off (PYTHONDONTWRITEBYTECODE, as this
# project's machines do), and then every process importing the core compiles it again: each
# Spark Python worker, each test's child writer and dbt run (`import hoodie.integration,
# hoodie.read.datasource, hoodie.write.executor`: 1.7 s compiled, 0.5-0.7 s from __pycache__,
# measured in session 41). Our targets write the cache (git ignores it).
unexport PYTHONDONTWRITEBYTECODE
# compat mode puts the checkout on sys.path, so PySpark's static data source lookup
# (top-level `pyspark_*` modules) finds `pyspark_hoodie` in an editable install too.
EDITABLE := --config-settings editable_mode=compat

.PHONY: apache-hudi test-hudi test-dbt demo test fuzz test-writers test-v8 test-deploy lint soak soak-hudi bench bench-smoke bench-upsert wheel java clean

.PHONY: help docs

# Plain `make` lists the targets.
.DEFAULT_GOAL := help
help:
	@echo "dbt-hoodie: make <target>"
	@echo "  demo          run sample_project/ on an embedded local Spark (creates .venv; TARGET=cluster: a local-cluster)"
	@echo "  test          lint, docs, then every test of the default suite (~20 min on 2 cores)"
	@echo "  lint          ruff, mypy (the core) and the import contracts"
	@echo "  docs          build the documentation site into site/ (strict); .venv/bin/mkdocs serve to browse it"
	@echo "  test-writers  the full concurrent-writer matrix (~7 min)"
	@echo "  test-v8       the main suite with every table at Hudi table version 8 (~10 min)"
	@echo "  test-hudi     Apache Hudi as the judge, all of it (~15 min)"
	@echo "  test-full     the cases of the core's test matrices make test samples (~2 min)"
	@echo "  test-dbt      the dbt tests make test runs a part of (~5 min)"
	@echo "  test-deploy   clusters, Spark Connect, dbt on Azure (~12 min)"
	@echo "  soak          random operation sequences against the model (SEQUENCES=, SEED=)"
	@echo "  soak-hudi     the same through Apache Hudi's datasource too"
	@echo "  fuzz          the damage fuzz (FUZZ_CASES=, FUZZ_SEED=)"
	@echo "  bench         the comparison at 1M, 3M and 10M rows, Apache Hudi too (hours; BENCH_SIZES=)"
	@echo "  bench-upsert  the single-batch upsert benchmarks of the core"
	@echo "  bench-smoke   the benchmarks' smoke runs at 3,000 rows (~6 min)"
	@echo "  apache-hudi   Apache Hudi 1.2's and 0.15's Spark bundles for the tests (~500 MB, once)"
	@echo "  wheel         build a wheel into dist/"
	@echo "  clean         remove the venv and the demo's output"
	@echo "Documentation: docs/ (make docs); docs/development.md describes each target."

java:
	@bash .ci/ensure-java.sh

# The venv's packages are installed by uv (from PyPI, into the venv pip made): on a fresh
# machine it resolves, downloads and builds them (PySpark is a source distribution) in about
# 40 seconds, where pip took 90. uv does not read pip's configuration: where only pip reaches
# the index (a mirror in pip.conf), pip installs them.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip "setuptools>=68" wheel uv

install = $(BIN)/uv pip install -q --python $(BIN)/python $(1) || $(BIN)/python -m pip install -q $(1)

$(VENV)/.base: $(BIN)/python pyproject.toml
	$(call install,-e . $(EDITABLE))
	touch $@

# Azurite, Microsoft's Azure Storage emulator, for the tests of tables on Azure (from the npm
# registry with the machine's Node.js, ~12 s; tests/azure_server.py starts it).
AZURITE_VERSION := 3.35.0
AZURITE := $(VENV)/azurite/node_modules/.bin/azurite-blob
$(AZURITE): | java  # after Java's check: both may apt-get, and apt takes one at a time
	@bash .ci/ensure-node.sh
	npm install --silent --no-audit --no-fund --prefix $(VENV)/azurite azurite@$(AZURITE_VERSION)
	touch $@

$(VENV)/.dev: $(VENV)/.base pyproject.toml $(AZURITE)
	$(call install,-e ".[dev]" $(EDITABLE))
	touch $@

# Apache Hudi itself, the judge of tests/apache_hudi: its Spark bundles from Maven Central and a
# PySpark they run on, in a venv of their own (the project's PySpark is newer than any bundle's
# Spark). Maven Central serves no Spark 4 bundle, so both versions run on Spark 3.5: Hudi 1.2
# (table versions 6, 8 and 9) and 0.15 (version 6). Downloaded once (~190 MB of jars, PySpark
# ~320 MB) into the project's .venv; later runs, offline too, reuse them.
HUDI_VERSIONS := 1.2.0 0.15.0
HUDI_PYSPARK := 3.5.9
HUDI_ENV := $(VENV)/apache-hudi
HUDI_JAR_DIR := $(VENV)/apache-hudi-jars
HUDI_BUNDLE = $(HUDI_JAR_DIR)/hudi-spark3.5-bundle_2.12-$(1).jar
HUDI_JARS := $(foreach v,$(HUDI_VERSIONS),$(call HUDI_BUNDLE,$(v)))
MAVEN_CENTRAL ?= https://repo1.maven.org/maven2

$(HUDI_ENV)/bin/python: | $(BIN)/python
	$(BIN)/uv venv -q --python $(abspath $(BIN)/python) $(HUDI_ENV) || $(BIN)/python -m venv $(HUDI_ENV)
	$(BIN)/uv pip install -q --python $@ pyspark==$(HUDI_PYSPARK) \
	  || { $(HUDI_ENV)/bin/python -m ensurepip -q && $@ -m pip install -q pyspark==$(HUDI_PYSPARK); }

# A jar is kept only when its SHA-1 matches Maven Central's.
$(HUDI_JAR_DIR)/%.jar:
	@mkdir -p $(@D)
	@v=$$(echo $* | sed 's/^hudi-spark3.5-bundle_2.12-//'); \
	u=$(MAVEN_CENTRAL)/org/apache/hudi/hudi-spark3.5-bundle_2.12/$$v/$*.jar; \
	echo "Fetching Apache Hudi $$v's Spark bundle from Maven Central..."; \
	curl -fsSL --retry 3 -o $@.part $$u && \
	echo "$$(curl -fsSL --retry 3 $$u.sha1 | cut -c1-40)  $@.part" | sha1sum -c --quiet - && mv $@.part $@

apache-hudi: $(HUDI_ENV)/bin/python $(HUDI_JARS)

# TARGET=cluster runs it on a local-cluster (sample_project/profiles.yml).
demo: java $(VENV)/.base
	$(BIN)/python sample_project/run_demo.py $(if $(TARGET),--target $(TARGET))

# ruff, mypy (the core type-checks) and the import contracts of pyproject.toml: the core's
# floors import downward only.
lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

# The documentation site (mkdocs.yml, docs/) into site/, strict: a warning (a broken link or
# anchor, a page missing from docs/) fails it. `make test` runs it, so CI builds the site.
# The option and error references are generated pages that unit tests hold to the code.
docs: $(VENV)/.dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider --durations=40

# Two pytest processes at once, about equal in work, one per core: tests/dbt (dbt's adapter
# test suite and our dbt scenarios) runs dbt in-process on a Hive-enabled session and needs a
# JVM of its own; the main suite runs the core on a plain one. The dbt suite's output is
# printed when both are done.
# The tests' JVMs (the suites' own and every child writer's or dbt run's) only use the quick
# JIT compiler: their work is small and short, and on 2 cores the optimizing compiler's
# threads cost more than they give back (a crash-test child: 35 s -> 22 s).
# They also map a class-data-sharing archive of the classes a Spark driver loads, made once
# per venv by one run of the same kind of work (.ci/jvm_class_archive.py, ~1 minute): each JVM
# then starts without loading and verifying Spark's classes again. A JVM whose class path or
# JDK differs from the archive's ignores it. Warnings go to stderr: spark-submit reads stdout.
JVM_QUICK := -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
CLASS_ARCHIVE := $(abspath $(VENV))/spark-classes.jsa
TEST_JVM_OPTIONS := $(JVM_QUICK) -XX:SharedArchiveFile=$(CLASS_ARCHIVE) -Xlog:disable -Xlog:all=warning:stderr

# It needs only the base install (pyspark and the core): made while the dev extras install.
$(CLASS_ARCHIVE): $(VENV)/.base .ci/jvm_class_archive.py | java
	@rm -f $@
	@echo "Making the JVM class archive for the tests (once per venv, ~1 minute)..."
	@JAVA_TOOL_OPTIONS="$(JVM_QUICK)" $(BIN)/python .ci/jvm_class_archive.py $@

# Tests whose work is all in child processes (two dbt runs at once, a clean venv, an upsert
# over Spark Connect) need neither suite's session: they run
# in the dbt suite's process, which has less work of its own, so the two processes end
# together.
BESIDE_DBT := tests/functional/test_concurrent_runs.py \
	tests/functional/test_packaging.py::test_wheel_in_a_clean_venv \
	tests/integration/test_spark_connect.py
# And the crash and fault tests and the object-store tests run after the dbt suite, in a
# process of their own (a plain session, as the main suite's) on the same core: the main suite
# had ~10 minutes more work than the dbt suite (`make test` took 24-26 minutes with all of them
# in the main suite; 19m44s with tests/faults moved: main suite 18m10s, dbt suite 10m50s then
# tests/faults 4m34s). The metadata table's writer tests (their crash cases kill a writer's JVM
# each) joined them when the dbt suite ran its upstream incremental tests on one lake
# materialization (estimated: main suite ~17 minutes, dbt suite then these ~17.5).
# Session 35 (`make test` 21m43s, over the 20-minute target): the comparison's smoke run went
# to `make bench-smoke`, and matrices `make test` samples keep their other cases under the
# markers `full` (make test-full) and `hudi_full` (make test-hudi).
# Session 38 (20m48s, main suite 19m18s): the delete-ordering tests joined them.
# Session 40 (21m00s; main suite 19m19s, dbt suite 10m05s then these 8m52s): Apache Hudi
# writing by our record index (27 s) joined them, as dbt's TestSnapshotTimestamp (42 s) left
# `make test` for `make test-dbt`.
AFTER_DBT := tests/faults tests/objectstore tests/interop/test_metadata_table_files.py \
	tests/interop/test_metadata_table_record_index.py tests/interop/test_delete_ordering.py \
	tests/judge/test_hudi_uses_our_record_index.py tests/judge/test_cdc_read_with_apache_hudi.py \
	tests/judge/test_cdc_write_with_apache_hudi.py

test: java $(VENV)/.dev lint docs $(CLASS_ARCHIVE) apache-hudi
	@export JAVA_TOOL_OPTIONS="$(TEST_JVM_OPTIONS)" HOODIE_REQUIRE_APACHE_HUDI=1; \
	log=$$(mktemp); \
	{ $(PYTEST) tests/dbt $(BESIDE_DBT); dbt=$$?; \
	  echo "== then AFTER_DBT: pytest $(AFTER_DBT) =="; \
	  $(PYTEST) $(AFTER_DBT); after=$$?; \
	  test $$dbt -eq 0 && test $$after -eq 0; } > $$log 2>&1 & suite=$$!; \
	$(PYTEST) $(addprefix --deselect ,$(BESIDE_DBT)) $(addprefix --ignore=,$(AFTER_DBT)); main=$$?; \
	wait $$suite; dbt=$$?; \
	echo "== the dbt suite (and BESIDE_DBT): pytest tests/dbt ... =="; cat $$log; rm -f $$log; \
	test $$main -eq 0 && test $$dbt -eq 0

# The differential test's soak (tests/property): SEQUENCES random operation sequences from
# SEED, each checked against the model of README's rules after every step; prints how many
# agreed and, on a disagreement, the shrunk sequence as core API calls. Not part of `make test`
# (which runs a small fixed set of the same test).
SEQUENCES ?= 100
SEED ?= 1
soak: java $(VENV)/.dev $(CLASS_ARCHIVE)
	@export JAVA_TOOL_OPTIONS="$(TEST_JVM_OPTIONS)"; \
	$(BIN)/python tests/property/soak.py --sequences $(SEQUENCES) --seed $(SEED)

# The same kind of sequences (upserts, the delete operation, schema widening, compaction,
# rollbacks) through Apache Hudi's datasource too (tests/property/soak_hudi.py; 0.15 for table
# version 6, 1.2 for 8), each on its own table, their rows compared after every step; prints
# how many agreed and, on a disagreement, the shrunk sequence with both tables' rows.
soak-hudi: java $(VENV)/.dev $(CLASS_ARCHIVE) apache-hudi
	@export JAVA_TOOL_OPTIONS="$(TEST_JVM_OPTIONS)"; \
	$(BIN)/python tests/property/soak_hudi.py --sequences $(SEQUENCES) --seed $(SEED)

# The damage fuzz (tests/faults/test_fuzz_damage.py) with FUZZ_CASES seeded cases from FUZZ_SEED
# (`make test` runs 320 of seed 38): each damages one file of a small table and asserts the
# read fails with the project's error naming it or returns the undamaged rows.
FUZZ_CASES ?= 5000
FUZZ_SEED ?= 38
fuzz: java $(VENV)/.dev $(CLASS_ARCHIVE)
	@export JAVA_TOOL_OPTIONS="$(TEST_JVM_OPTIONS)" FUZZ_CASES=$(FUZZ_CASES) FUZZ_SEED=$(FUZZ_SEED); \
	$(PYTEST) -s tests/faults/test_fuzz_damage.py

# The full concurrent-writer matrix (marker `writers`, left out of `make test`, which runs two
# of its twelve scenarios with three writers for four rounds): 4 writer processes x 10 rounds
# over COW/MOR x SIMPLE/BUCKET x overlapping/disjoint keys on a local disk, and two each on S3
# and Azure, with inline compaction and clean inside the writers; then two writers with the
# default settings, 20 rounds over COW/MOR x overlapping/disjoint keys, and every case of a
# writer started while another is about to commit (test_two_writers_at_once.py); the same with
# the metadata table on, on table versions 6 and 8 (the local scenarios and one on S3), then
# again with its column_stats and bloom_filters indexes (readers filtering by them meanwhile),
# readers during writes and a writer losing its lock mid-commit on version 6, and two dbt runs
# of one model at once with the metadata table on both versions and with its indexes
# (test_concurrent_runs.py).
test-writers: java $(VENV)/.dev $(CLASS_ARCHIVE)
	@export JAVA_TOOL_OPTIONS="$(TEST_JVM_OPTIONS)"; \
	$(PYTEST) -m writers tests/faults tests/functional/test_concurrent_runs.py

# The main suite again with every table it creates at table version 8 (Hudi 1.x's layout;
# `pytest --table-version 8`): tests that assert version 6's files (marker layout_v6) are
# skipped. Not part of `make test` (which runs version 8 through its own tests), ~10 minutes.
test-v8: java $(VENV)/.dev $(CLASS_ARCHIVE)
	@export JAVA_TOOL_OPTIONS="$(TEST_JVM_OPTIONS)"; \
	$(PYTEST) --table-version 8 $(addprefix --deselect ,$(BESIDE_DBT))

# Apache Hudi as the judge, all of it (marker `hudi_full`, left out of `make test`, which runs
# tests/judge/test_smoke.py): Apache Hudi 1.2 and 0.15 read every layout we write, we read what
# they write, both take turns on one table, and the soak's fixed sequences. ~15 minutes.
# Then the other `hudi_full` cases, of files `make test` runs the rest of: the metadata table's
# crash points on the table version `make test` leaves out, the crash in its compaction `make
# test` leaves out and the crash while its indexes are built (~2 minutes).
HUDI_FULL_ELSEWHERE := tests/interop/test_metadata_table_files.py \
	tests/interop/test_metadata_table_services.py tests/interop/test_metadata_table_indexes.py \
	tests/interop/test_metadata_table_record_index.py
test-hudi: java $(VENV)/.dev $(CLASS_ARCHIVE) apache-hudi
	@export JAVA_TOOL_OPTIONS="$(TEST_JVM_OPTIONS)" HOODIE_REQUIRE_APACHE_HUDI=1; \
	$(PYTEST) -m "not writers and not deploy and not bench" tests/judge \
	  tests/property/test_apache_hudi_oracle.py; judge=$$?; \
	$(PYTEST) -m hudi_full $(HUDI_FULL_ELSEWHERE); rest=$$?; \
	test $$judge -eq 0 && test $$rest -eq 0

# The cases of the core's test matrices `make test` samples (marker `full`): the layouts
# (table type x version) and index variants a matrix's make-test cases already cover pairwise.
# ~2 minutes.
test-full: java $(VENV)/.dev $(CLASS_ARCHIVE)
	@export JAVA_TOOL_OPTIONS="$(TEST_JVM_OPTIONS)"; \
	$(PYTEST) -m full tests/spark tests/property tests/interop

# The dbt tests `make test` runs a part of (marker `dbt_full`): dbt's adapter tests on the lake
# materialization `make test` leaves out (it runs each upstream test of
# tests/dbt/adapter/test_lake_incremental.py on one of cow_upsert and mor_upsert, which share
# their macro and adapter call), and the mor_upsert scenario at table version 8. ~4 minutes.
test-dbt: java $(VENV)/.dev $(CLASS_ARCHIVE)
	@export JAVA_TOOL_OPTIONS="$(TEST_JVM_OPTIONS)"; \
	$(PYTEST) -m "dbt_full and not deploy" tests/dbt

# Deployments (marker `deploy`, left out of `make test` for their cost): the core and dbt
# on a local-cluster (separate executor JVMs), every dbt scenario over Spark Connect
# (`make test` runs one), whose Python workers lack dbt-hoodie, and dbt on Azure.
test-deploy: java $(VENV)/.dev $(CLASS_ARCHIVE)
	@export JAVA_TOOL_OPTIONS="$(TEST_JVM_OPTIONS)"; \
	$(PYTEST) -m "deploy or connect" tests/deploy tests/dbt tests/functional

# The comparison of bench/README.md at three sizes: our core (copy-on-write, merge-on-read)
# against plain Spark, delta-rs and Apache Hudi itself (1.2 at table version 8 with its defaults
# and with our settings, 0.15; on its own Spark 3.5, `make apache-hudi`), with the pyarrow
# bound, N = 1M, 3M and 10M rows, one size after the other:
# bench/results/compare_{1M,3M,10M}.{json,md,png} and the ratios by size in
# compare_sizes.{json,md,png}. Some hours on 2 cores; BENCH_SIZES=1000000 for one size,
# BENCH_SYSTEMS= for fewer systems. pyiceberg (and the BUCKET-index variants) run by hand.
BENCH_SIZES ?= 1000000,3000000,10000000
BENCH_APACHE_HUDI ?= apache_hudi_cow,apache_hudi_mor,apache_hudi_cow_ours,apache_hudi_mor_ours,apache_hudi_015_cow,apache_hudi_015_mor
BENCH_COMMA := ,
BENCH_SYSTEMS ?= cow_upsert,mor_upsert,spark_parquet,deltalake$(if $(wildcard $(HUDI_ENV)/bin/python),$(BENCH_COMMA)$(BENCH_APACHE_HUDI))
bench: java $(VENV)/.dev apache-hudi
	$(BIN)/python bench/compare.py --rows $(BENCH_SIZES) --systems $(BENCH_SYSTEMS)

# Smoke runs of the benchmarks (marker `bench`, left out of `make test`): the comparison
# (bench/compare.py, Apache Hudi's systems too) and bench/dbt_incremental.py at 3,000 rows,
# ~6 minutes.
bench-smoke: java $(VENV)/.dev $(CLASS_ARCHIVE) apache-hudi
	@export JAVA_TOOL_OPTIONS="$(TEST_JVM_OPTIONS)" HOODIE_REQUIRE_APACHE_HUDI=1; \
	$(PYTEST) -m bench tests/bench

# The single-batch upsert benchmarks of our core (bench/upsert_cow.py, bench/upsert_mor.py).
bench-upsert: java $(VENV)/.dev
	$(BIN)/python bench/upsert_cow.py
	$(BIN)/python bench/upsert_mor.py

wheel: $(VENV)/.dev
	$(BIN)/python -m build --wheel --outdir dist .

clean:
	rm -rf $(VENV) build dist *.egg-info sample_project/target sample_project/lake sample_project/metastore
