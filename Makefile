# subledger: `make run` builds and runs the nightly job on sample-data/ into Reports/; `make test` runs every test.
SWIFT    ?= swift
RELEASE  := .build/release/subledger
SAMPLE   := sample-data
REPORTS  := Reports

.PHONY: all setup build run test bench browser-check sample-data clean fuzz fuzz-build

all: build

# The three system libraries the package links (SQLite, zlib and zstd), from Debian, installed only when missing.
setup:
	@missing=""; \
	for p in libsqlite3-dev zlib1g-dev libzstd-dev; do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$missing; \
	fi

build: setup
	$(SWIFT) build -c release --product subledger

# Exit 1 from `subledger run` means "finished, but some input was quarantined or damaged": the sample data has
# such noise on purpose (garbage lines, a truncated archive, forged notifications), so that is success here.
run: build
	@mkdir -p $(REPORTS)
	@$(RELEASE) run --db $(REPORTS)/subledger.sqlite --out $(REPORTS) \
	  --apple-root-ca $(SAMPLE)/apple-root.der --prices $(SAMPLE)/prices.csv $(SAMPLE)/archives; \
	status=$$?; \
	if [ $$status -eq 1 ]; then echo "(exit 1: the sample data's deliberate noise was quarantined, as listed above)"; \
	elif [ $$status -ne 0 ]; then exit $$status; fi

# The PostgreSQL tests start a throwaway server from Debian's postgresql-15 (.ci/run installs it); without the
# server binaries they are skipped, and this says so.
test: setup
	$(SWIFT) build --build-tests
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
	  echo "NOTE: no PostgreSQL server binaries (apt-get install postgresql-15): the PostgreSQL ledger tests are SKIPPED"
	$(SWIFT) test --skip-build

# Opens Reports/report.html in headless Chromium (installed when missing): screenshot, rendered DOM, and a
# check that every chart is there and every number on the page equals its CSV cell.
browser-check: run
	./scripts/browser-check.sh $(REPORTS)

bench: build
	./scripts/bench.sh
	./scripts/bench-scale.sh

# The libFuzzer harnesses (Fuzz/, a package of its own: `make build` and `make test` never build them), with
# AddressSanitizer, in .build-fuzz; lld links them (gold stops on an internal error with ASan's debug info).
fuzz-build: setup
	$(SWIFT) build -c release --package-path Fuzz --scratch-path .build-fuzz \
	  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -use-ld=lld

# Runs every harness for FUZZ_SECONDS (default 60) and fails on any crash, hang or out-of-memory (docs/FUZZING.md).
fuzz: fuzz-build
	./scripts/fuzz.sh

# Regenerates the committed sample data from its fixed seed.
sample-data: build
	rm -rf $(SAMPLE)/archives $(SAMPLE)/truth.json $(SAMPLE)/prices.csv $(SAMPLE)/apple-root.der
	$(RELEASE) simulate --out $(SAMPLE) --subscribers 200 --months 18 --seed 20240101

clean:
	rm -rf .build .build-fuzz $(REPORTS)/*.csv $(REPORTS)/*.json $(REPORTS)/*.html $(REPORTS)/*.sqlite*
