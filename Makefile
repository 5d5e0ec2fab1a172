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

# The main job on built-in data: a short tuning job on LLAMA-LAYER over four P100s into a fresh
# data directory (heuristics first, then parallel rollout actors), then the stored best read back;
# then DOPPLER's learned placement (the built-in policy, then 10 s of training on a transformer
# block); then the pipeline baselines on a hybrid Mamba/attention model; then real execution: a
# feed-forward network's ops profiled on this machine's cores and a placement run for real beside
# the calibrated simulator's prediction.
DEMO_DATA ?= $(BUILD)/demo-data
DEMO_FFNN = ffnn:layers=4,blocks=3,batch=512,hidden=512
demo: build
	rm -rf $(DEMO_DATA)
	./$(BUILD)/gantry place --workload llama-layer --cluster 4xP100-pcie --method single,round-robin,random,cp,heft
	./$(BUILD)/gantry tune --workload llama-layer --cluster 4xP100-pcie --budget 10s --data $(DEMO_DATA) \
	  --svg $(BUILD)/demo.svg --trace $(BUILD)/demo-trace.json
	./$(BUILD)/gantry query best --workload llama-layer --cluster 4xP100-pcie --data $(DEMO_DATA)
	./$(BUILD)/gantry place --workload llama-block:costs=doppler --cluster identical:4 --sim doppler --method cp,doppler
	./$(BUILD)/gantry train --workload llama-block:costs=doppler --cluster identical:4 --sim doppler --budget 10s \
	  --data $(DEMO_DATA) --curve $(BUILD)/demo-learning.svg
	./$(BUILD)/gantry query policies --data $(DEMO_DATA)
	./$(BUILD)/gantry pipeline compare --model nemotron-h-8b --cluster 8xH100-nvswitch --microbatches 16
	./$(BUILD)/gantry pipeline tune --model nemotron-h-8b --cluster 8xH100-nvswitch --microbatches 16 --max-chunks 2 \
	  --data $(DEMO_DATA) --svg $(BUILD)/demo-pipeline.svg
	./$(BUILD)/gantry query best --model nemotron-h-8b --cluster 8xH100-nvswitch --microbatches 16 --data $(DEMO_DATA)
	./$(BUILD)/gantry profile --cluster cpu-2 --workload $(DEMO_FFNN) --data $(DEMO_DATA)
	./$(BUILD)/gantry execute --workload $(DEMO_FFNN) --cluster cpu-2 --method heft --profiled --data $(DEMO_DATA) \
	  --svg $(BUILD)/demo-measured.svg
	@echo "timeline of the tuned placement: $(BUILD)/demo.svg (and $(BUILD)/demo-trace.json for ui.perfetto.dev)"
	@echo "learning curve of the DOPPLER policy: $(BUILD)/demo-learning.svg"
	@echo "timeline of the tuned pipeline scheme: $(BUILD)/demo-pipeline.svg"
	@echo "measured timeline of the executed placement: $(BUILD)/demo-measured.svg"

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
