# Burnrate — `make help` lists the targets.
SHELL := /bin/bash
GO ?= go

.PHONY: help run test test-fast fuzz generate docs assets lint verify build

help: ## list targets
	@awk 'BEGIN{FS=":.*## "} /^[a-z\/-]+:.*## /{printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

run: ## run Burnrate on :8080 (its own private Postgres unless DATABASE_URL is set)
	$(GO) run ./cmd/burnrate serve

test: ## run every test against real Postgres (TEST_DATABASE_URL, else 127.0.0.1:5432, else a private cluster)
	scripts/test-deps
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

# The edit-test loop's tier: every test but the browser ones, without the
# race detector. Browser tests are the tests named TestBrowser… (web/browsertest
# refuses a test of any other name, so none slips past -skip). Vet is make
# lint's, the fuzz targets make fuzz's; make test (CI) runs everything.
# Eight parallel tests a package rather than one a core: the web tests spend
# most of their time waiting on Postgres and on timers, not on the CPU
# (web alone: 153 s rather than 242 s on the 2-core machine).
test-fast: ## every test but the browser ones, without -race or vet: the edit-test loop (make test is the full run)
	scripts/test-deps
	$(GO) test -count=1 -parallel 8 -skip '^TestBrowser' ./...

# A count, not a duration: with a -fuzztime duration, Go 1.26's fuzzing
# coordinator can fail a target with "context deadline exceeded" at the
# deadline on a busy machine, without any failing input (go.dev/issue/75804,
# fixed in Go 1.27). About ten seconds a target here.
fuzz: ## run each parser fuzz target briefly (FUZZTIME, default 15000x: that many inputs)
	for target in FuzzOpen FuzzParse FuzzParseTagMap FuzzCSVReader FuzzParquetFooter; do \
		$(GO) test -run='^$$' -fuzz="^$$target$$" -fuzztime=$${FUZZTIME:-15000x} ./ingest/ || exit 1; \
	done

generate: ## regenerate templ code
	$(GO) tool templ generate

docs: ## rewrite the package graph in docs/architecture.md from `go list`
	$(GO) run ./cmd/docs graph

assets: ## vendor front-end assets from npm into static/ (pinned in package.json; output committed)
	npm ci --no-audit --no-fund
	cp node_modules/htmx.org/dist/htmx.min.js static/vendor/htmx.min.js
	cp node_modules/echarts/dist/echarts.min.js static/vendor/echarts.min.js
	cp node_modules/@picocss/pico/css/pico.min.css static/vendor/pico.min.css
	cp node_modules/@picocss/pico/LICENSE.md static/vendor/pico.LICENSE.md
	cp node_modules/htmx.org/LICENSE static/vendor/htmx.LICENSE
	cp node_modules/echarts/LICENSE static/vendor/echarts.LICENSE

lint: ## vet, gofmt, staticcheck, no unreachable code (deadcode), docs true to the code; tools pinned in go.mod
	$(GO) vet ./...
	test -z "$$(gofmt -l $$(git ls-files '*.go'))"
	$(GO) tool staticcheck ./...
	dead="$$($(GO) tool deadcode -test ./...)"; test -z "$$dead" || { echo "$$dead"; exit 1; }
	$(GO) run ./cmd/docs check

verify: generate ## fail if generated templ code is stale
	git diff --exit-code -- '*_templ.go'

build: ## a static binary in bin/
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o bin/burnrate ./cmd/burnrate
