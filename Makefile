# The two commands of the README, and a few more. Everything builds with CMake presets in build/<preset>.
#   make demo    set up, build (release) and simulate the seed scenario; the report goes to out/demo
#   make test    set up (with clang and Chromium), build (dev: ASan + UBSan, warnings as errors), run every
#                test (the HTML reports in headless Chromium too), fuzz the loader 30 s
#   make bench   build (bench) and run the benchmarks, writing reports/
.PHONY: demo test bench setup setup-test build-release build-dev build-bench fuzz format clean

JOBS ?= $(shell nproc)
DEMO_SCENARIO ?= scenarios/shard-preprocess-train.yaml
FUZZ_SECONDS ?= 30

setup:
	scripts/setup

# Everything at once, so that apt-get update runs once on a fresh machine.
setup-test:
	scripts/setup --fuzz --browser

build-release: setup
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

build-dev: setup
	cmake --preset dev >/dev/null
	cmake --build --preset dev -j $(JOBS)

build-bench: setup
	cmake --preset bench >/dev/null
	cmake --build --preset bench -j $(JOBS)

demo: setup
	cmake --preset release >/dev/null
	cmake --build --preset release --target shardflow -j $(JOBS)
	build/release/shardflow validate $(DEMO_SCENARIO)
	build/release/shardflow explain $(DEMO_SCENARIO)
	build/release/shardflow simulate $(DEMO_SCENARIO) --out out/demo
	@echo "The report, to open in a browser: $(CURDIR)/out/demo/report.html"

# The fuzz run comes first so that CTest's summary is the last thing a CI log shows.
test: setup-test
	$(MAKE) build-dev
	scripts/fuzz --seconds $(FUZZ_SECONDS)
	ctest --preset dev

bench: build-bench
	scripts/bench

fuzz:
	scripts/setup --fuzz
	scripts/fuzz --seconds $(FUZZ_SECONDS)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp' '*.inl')

clean:
	rm -rf build out
