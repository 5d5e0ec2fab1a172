# The two commands of the README. Both install missing Debian packages first, then build in build/.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: demo test build deps clean

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# The main job on built-in data: place LLAMA-LAYER on four P100s with every method and compare.
demo: build
	./$(BUILD)/gantry place --workload llama-layer --cluster 4xP100-pcie --method all --budget 5s \
	  --trace $(BUILD)/demo-trace.json --svg $(BUILD)/demo.svg
	@echo "timeline of the best placement: $(BUILD)/demo.svg (and $(BUILD)/demo-trace.json for ui.perfetto.dev)"

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
