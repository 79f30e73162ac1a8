#!/usr/bin/env bash
# Every GPU test and GPU benchmark of the project, for the device machine (H200):
#   scripts/gpu_suite.sh [suite|suite_regions|corpus|regions|alone|regions_kb|shapes|baseline|profiles|throughput|paper|kinds|fusion|judge|overhead|launcher|all]
#   (default: suite)
# Logs and results go to $OUT (device) or out/gpu_suite (elsewhere). Needs ../shared/kernelbench and
# ../shared/samples; on the device they travel as .device/evaluator/shared (carry it) and are linked here.
# suite: the oracle's GPU tests (tests/evaluator); suite_regions: the region framework's (tests/regions: exported
# kernels, fused epilogues, launch shapes; 14 tests in 7.3 min on the H200, 2026-12-04, each in its own call).
# Measured on the H200 (2026-11-30): suite ~4.5 min (one ~60 s nvcc build shared by all candidates; 46 tests
# in 197 s on 2026-12-04);
# profiles ~10 s per problem (~5 min for all 30); baseline: torch.compile timings for 29 problems ~2.7 min
# (resumable: it measures only what benchmarks/baselines/h200.json lacks); throughput cold batch ~4.5 min,
# warm repeat ~1.7 min, plain serial loop of 10 ~9 min (one nvcc build each): split it over calls, e.g.
#   KG_THROUGHPUT_ARGS='--phases serial --budget-s 470' scripts/gpu_suite.sh throughput
#   KG_THROUGHPUT_ARGS='--phases cold,repeat,serial --budget-s 500 --serial-resume FIRST.json' \
#     scripts/gpu_suite.sh throughput
# then copy the JSON files into benchmarks/results and run
#   python -m benchmarks.evaluator_throughput --summarize --out-dir benchmarks/results
# paper: one evaluation round of benchmarks/kernelbench_paper.py. Carry the jobs file (and the verdicts of
# an earlier, cut-off call of the same round to resume it); the call stops itself after KG_PAPER_BUDGET_S:
#   KG_PAPER_JOBS=.device/paper/jobs.jsonl [KG_PAPER_VERDICTS=.device/paper/verdicts.jsonl] \
#     scripts/gpu_suite.sh paper        -> $OUT/verdicts.jsonl
# Profiles of some problems only: KG_PROFILE_ARGS='--levels 3' scripts/gpu_suite.sh profiles
# Subsets of the suite: KG_GPU_SUITE_ONLY=correct,side_stream scripts/gpu_suite.sh suite
# corpus: the 50 retrieval-corpus examples under today's strict verdict (no legitimate kernel may be
# rejected; ~200 s with 30 timing trials); meta.json files are left untouched -> $OUT/corpus/
# regions: judge the region kernels of benchmarks/regions.py as the region kind (NVRTC), cold, with its
# throughput (write the jobs here first, carry .device/regions):
#   .venv/bin/python -m benchmarks.regions jobs --jobs .device/regions/jobs.jsonl
#   KG_REGION_JOBS=.device/regions/jobs.jsonl scripts/gpu_suite.sh regions
#     -> $OUT/region_verdicts.jsonl, $OUT/evaluator_throughput_regions.json
#   (KG_REGION_CONFIG replaces its EvalConfig overrides, e.g. to try "workers_per_device": 4; each
#   verdict's evidence.stage_seconds says where the worker's time went, and the summary sums them)
#   The throughput record (benchmarks/results/evaluator_throughput_runs.json) used 60 jobs, samples s0 and s1:
#   .venv/bin/python -m benchmarks.regions jobs --jobs /tmp/all.jsonl
#   grep -E '/s[01]"' /tmp/all.jsonl > .device/regions/jobs60.jsonl   # 28-32 verdicts/min, 2026-12-04
# regions_runs: that batch three times, cold each time, GPU utilization sampled (the median is the figure):
#   KG_REGION_JOBS=.device/regions/jobs60.jsonl [KG_RUN_WORKERS="8 12 12"] scripts/gpu_suite.sh regions_runs
# alone: the same jobs judged by evaluator/ copied into an empty folder, nothing else on the path
#   KG_REGION_JOBS=.device/regions/jobs.jsonl scripts/gpu_suite.sh alone   -> $OUT/alone_verdicts.jsonl
# regions_kb: the same kernels as KernelBench programs (load_inline), for KernelBench's own rules:
#   .venv/bin/python -m benchmarks.regions jobs --launcher load_inline --greedy-only --jobs .device/regions/jobs_kb.jsonl
#   KG_REGION_KB_JOBS=.device/regions/jobs_kb.jsonl scripts/gpu_suite.sh regions_kb
#     -> $OUT/region_kb_verdicts.jsonl
# shapes: the model's greedy kernels on their first contract and on every launch shape they move to, one run
# (--by-rule: the framework's own bodies instead, benchmarks/results/launch_shapes_rules/README.md):
#   .venv/bin/python -m benchmarks.launch_shapes jobs --jobs .device/shapes/jobs.jsonl
#   KG_SHAPES_JOBS=.device/shapes/jobs.jsonl scripts/gpu_suite.sh shapes   -> $OUT/shapes_verdicts.jsonl
#   then here: python -m benchmarks.launch_shapes choose (the model's picks); ... report --verdicts shapes_verdicts.jsonl
# to judge jobs a batch did not reach (no throughput figure; resumable, like `paper`):
#   python3 -m evaluator run JOBS.jsonl --out $OUT/more_verdicts.jsonl \
#     --config '{"reference_compile": "baseline", "baseline_file": "benchmarks/baselines/h200.json"}'
# then here: python -m benchmarks.regions report --verdicts region_verdicts.jsonl [--exported FILE]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-out/gpu_suite}"
mkdir -p "$OUT"
if [ ! -e ../shared/kernelbench ] && [ -d .device/evaluator/shared ]; then
  ln -sfn "$PWD/.device/evaluator/shared" ../shared
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PY="${PYTHON:-python3}"
CACHE="${KG_EVAL_CACHE:-/tmp/kg_eval_cache}"
what="${1:-suite}"
BASELINE_CONFIG='{"reference_compile": "baseline", "baseline_file": "benchmarks/baselines/h200.json"}'
# paper rounds: four run workers keep the device busy while others start (measured on the H200 with region
# candidates: 9.4 verdicts/min with two, 14.7 with four); torch.compile's reference is compiled in each
# timed candidate's process and timed in the candidate's own trials, beside eager (a speed claim against
# it needs the same run; a compile per strictly correct candidate)
PAPER_CONFIG='{"reference_compile": "interleaved", "workers_per_device": 4}'

run_suite() {
  KG_GPU_SUITE_LOG="$OUT" KG_GPU_SUITE_CACHE="$CACHE/suite" \
    "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/evaluator 2>&1 | tee "$OUT/gpu_suite.log"
}
run_suite_regions() {
  "$PY" -m pytest -q -p no:cacheprovider -m gpu tests/regions 2>&1 | tee "$OUT/gpu_suite_regions.log"
}
run_baseline() {
  # resumable: starts from the committed file, measures only what it lacks for this GPU and torch
  [ -e "$OUT/baseline_h200.json" ] || cp benchmarks/baselines/h200.json "$OUT/baseline_h200.json"
  "$PY" -m evaluator baseline ../shared/kernelbench --out "$OUT/baseline_h200.json" --budget-s "${KG_BASELINE_BUDGET:-300}" \
    --cache-dir "$CACHE/baseline" --config "{\"run_timeout_s\": ${KG_BASELINE_TIMEOUT:-240}}" 2>&1 \
    | tee "$OUT/baseline.log"
}
run_profiles() {
  # the references' op-level profiles, for profiling-guided prompts written on hosts without this GPU
  "$PY" -m evaluator profile ../shared/kernelbench --out "$OUT/profiles" --cache-dir "$CACHE/profiles" \
    ${KG_PROFILE_ARGS:-} 2>&1 | tee -a "$OUT/profiles.log"
}
run_paper() {
  # resumable: job ids already in the verdicts file are not evaluated again
  [ -n "${KG_PAPER_VERDICTS:-}" ] && [ ! -e "$OUT/verdicts.jsonl" ] && cp "$KG_PAPER_VERDICTS" "$OUT/verdicts.jsonl"
  # KG_PAPER_CONFIG="$BASELINE_CONFIG" takes torch.compile's time from the committed baseline instead
  # (another day's measurement: faster rounds, no speed claim against torch.compile)
  timeout -k 20 --signal=INT "${KG_PAPER_BUDGET_S:-540}" "$PY" -m evaluator run "${KG_PAPER_JOBS:?set KG_PAPER_JOBS}" \
    --out "$OUT/verdicts.jsonl" --cache-dir "$CACHE/paper" --config "${KG_PAPER_CONFIG:-$PAPER_CONFIG}" 2>&1 \
    | tr '\r' '\n' | tee "$OUT/paper.log"
}
run_kinds() {
  # the loop kinds on the GPU: hand-written bodies for every kind (tests/regions/test_kinds_gpu.py), then every
  # jobs file under .device/kinds (a deferred run.py directory's jobs.jsonl, renamed) judged on its own:
  #   cp runs/X/jobs.jsonl .device/kinds/X.jsonl; scripts/gpu_suite.sh kinds -> $OUT/X.verdicts.jsonl
  #   (an A/B's arms in one file: python -m benchmarks.arm_jobs runs/A:old runs/B:new --out .device/kinds/X.jsonl)
  #   then here: run.py --resume runs/X --results X.verdicts.jsonl
  # X.config beside X.jsonl replaces the EvalConfig overrides for it (the project's own tasks have no
  # torch.compile baseline: '{"reference_compile": "off"}' spares a compile per problem). X.budget beside it
  # replaces KG_KINDS_BUDGET_S (seconds) for that file, so a call's time goes where its jobs need it.
  # (KG_KINDS_TESTS=0: the jobs files alone, for a later round of the same runs; KG_KINDS_GPU_TESTS names
  # other GPU test files to run instead, e.g. tests/regions/test_conv_tiles.py)
  if [ "${KG_KINDS_TESTS:-1}" != 0 ]; then
    "$PY" -m pytest -q -p no:cacheprovider -m gpu ${KG_KINDS_GPU_TESTS:-tests/regions/test_kinds_gpu.py} 2>&1 \
      | tee "$OUT/kinds_gpu.log"
  fi
  local jobs name config budget
  for jobs in .device/kinds/*.jsonl; do
    name=$(basename "$jobs" .jsonl)
    config="$BASELINE_CONFIG"
    [ -e "${jobs%.jsonl}.config" ] && config=$(cat "${jobs%.jsonl}.config")
    budget="${KG_KINDS_BUDGET_S:-240}"
    [ -e "${jobs%.jsonl}.budget" ] && budget=$(cat "${jobs%.jsonl}.budget")
    timeout -k 20 --signal=INT "$budget" "$PY" -m evaluator run "$jobs" \
      --out "$OUT/$name.verdicts.jsonl" --cache-dir "$CACHE/kinds" --config "$config" 2>&1 \
      | tr '\r' '\n' | tail -20 > "$OUT/$name.log"
  done
}
run_corpus() {
  "$PY" -m retrieval_corpus.validate run --out "$OUT/corpus" --no-write-meta 2>&1 | tee "$OUT/corpus.log"
}
run_regions() {
  # the region kind, cold cache: verdicts and candidates per minute; torch.compile times from the baseline
  "$PY" -m benchmarks.evaluator_throughput --out-dir "$OUT" --phases regions --cache-dir "$CACHE/regions" \
    --jobs "${KG_REGION_JOBS:?set KG_REGION_JOBS}" --config "${KG_REGION_CONFIG:-$BASELINE_CONFIG}" 2>&1 \
    | tee "$OUT/regions.log"
}
run_regions_runs() {
  # the same cold batch several times, each with a new empty cache and the GPU's utilization sampled every
  # 0.5 s: KG_RUN_WORKERS="12 12 12" (workers per device, one run each; default: the config's) -> $OUT/runs.tgz
  local i=0 w config
  for w in ${KG_RUN_WORKERS:-default default default}; do
    i=$((i + 1))
    config="${KG_REGION_CONFIG:-$BASELINE_CONFIG}"
    [ "$w" != default ] && config="${config%\}}, \"workers_per_device\": $w}"
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 500 >"$OUT/util_$i.txt" 2>&1 &
    local smi=$!
    KG_EVAL_CACHE="$(mktemp -d "${TMPDIR:-/tmp}/kg_cold_XXXX")" KG_REGION_CONFIG="$config" OUT="$OUT/r$i" \
      timeout -k 10 "${KG_RUN_LIMIT_S:-170}" bash "$PWD/scripts/gpu_suite.sh" regions >"$OUT/r$i.log" 2>&1
    kill "$smi"
    echo "run $i (workers: $w): $(tr -d '\n ' <"$OUT/r$i/evaluator_throughput_regions.json" | grep -o '"candidates_per_min":[0-9.]*')"
  done
  (cd "$OUT" && tar czf runs.tgz r[0-9]* util_*.txt && rm -rf r[0-9]* util_*.txt)
}
run_alone() {
  # the oracle alone: evaluator/ copied into an empty folder judges region jobs with torch and nothing else
  # of the project on the path (PYTHONPATH is that folder only)
  local alone jobs baseline
  alone=$(mktemp -d) jobs=$(realpath "${KG_REGION_JOBS:?set KG_REGION_JOBS}") baseline="$PWD/benchmarks/baselines/h200.json"
  cp -r evaluator "$alone/"
  (cd "$alone" && PYTHONPATH="$alone" "$PY" -m evaluator run "$jobs" --out "$OUT/alone_verdicts.jsonl" \
    --cache-dir "$CACHE/alone" \
    --config "{\"reference_compile\": \"baseline\", \"baseline_file\": \"$baseline\", \"workers_per_device\": 4}") 2>&1 \
    | tee "$OUT/alone.log"
}
run_regions_kb() {
  # the same kernels as standalone KernelBench programs (load_inline, an nvcc build each); resumable
  [ -n "${KG_REGION_KB_VERDICTS:-}" ] && [ ! -e "$OUT/region_kb_verdicts.jsonl" ] && \
    cp "$KG_REGION_KB_VERDICTS" "$OUT/region_kb_verdicts.jsonl"
  timeout -k 20 --signal=INT "${KG_REGION_BUDGET_S:-540}" "$PY" -m evaluator run \
    "${KG_REGION_KB_JOBS:?set KG_REGION_KB_JOBS}" --out "$OUT/region_kb_verdicts.jsonl" \
    --cache-dir "$CACHE/regions_kb" --config "$BASELINE_CONFIG" 2>&1 | tr '\r' '\n' | tee "$OUT/regions_kb.log"
}
run_shapes() {
  "$PY" -m evaluator run "${KG_SHAPES_JOBS:?set KG_SHAPES_JOBS}" --out "$OUT/shapes_verdicts.jsonl" \
    --cache-dir "$CACHE/shapes" --config "$BASELINE_CONFIG" 2>&1 | tr '\r' '\n' | tee "$OUT/shapes.log"
}
run_fusion() {
  # epilogues fused into windows and reductions against the same bodies apart (benchmarks/fusion.py: by rule,
  # products left to PyTorch), eager and torch.compile timed in the candidates' trials; resumable:
  #   .venv/bin/python -m benchmarks.fusion jobs --jobs .device/fusion/jobs.jsonl   (here; carry .device)
  #   KG_FUSION_JOBS=.device/fusion/jobs.jsonl scripts/gpu_suite.sh fusion   -> $OUT/fusion_verdicts.jsonl
  #   then here: python -m benchmarks.fusion report --verdicts fusion_verdicts.jsonl --jobs .device/fusion/jobs.jsonl
  timeout -k 20 --signal=INT "${KG_FUSION_BUDGET_S:-300}" "$PY" -m evaluator run \
    "${KG_FUSION_JOBS:?set KG_FUSION_JOBS}" --out "$OUT/fusion_verdicts.jsonl" --cache-dir "$CACHE/fusion" \
    --config "$PAPER_CONFIG" 2>&1 | tr '\r' '\n' | tail -20 > "$OUT/fusion.log"
}
run_judge() {
  # any job files, one after another, eager and torch.compile timed in each candidate's own trials (the paper
  # config); a file's verdicts go to $OUT/<its name>.verdicts.jsonl; resumable: a verdict already there
  # (carried back in as KG_JUDGE_RESUME/<name>.verdicts.jsonl) is not judged again; the call stops itself
  # after KG_JUDGE_BUDGET_S:  KG_JUDGE_JOBS=".device/a.jsonl .device/b.jsonl" scripts/gpu_suite.sh judge
  local jobs name end=$((SECONDS + ${KG_JUDGE_BUDGET_S:-500}))
  for jobs in ${KG_JUDGE_JOBS:?set KG_JUDGE_JOBS}; do
    name=$(basename "$jobs" .jsonl)
    [ -n "${KG_JUDGE_RESUME:-}" ] && [ -e "$KG_JUDGE_RESUME/$name.verdicts.jsonl" ] && \
      cp "$KG_JUDGE_RESUME/$name.verdicts.jsonl" "$OUT/$name.verdicts.jsonl"
    [ $SECONDS -ge $end ] && { echo "budget spent before $name" >> "$OUT/judge.log"; continue; }
    timeout -k 20 --signal=INT $((end - SECONDS)) "$PY" -m evaluator run "$jobs" \
      --out "$OUT/$name.verdicts.jsonl" --cache-dir "$CACHE/judge" --config "$PAPER_CONFIG" 2>&1 \
      | tr '\r' '\n' | tail -5 >> "$OUT/judge.log"
    echo "$name: $(wc -l < "$OUT/$name.verdicts.jsonl") verdicts at ${SECONDS} s" >> "$OUT/judge.log"
  done
}
run_overhead() {
  # a region kernel's host cost per call against torch.relu's (benchmarks/launch_overhead.py; seconds)
  "$PY" -m benchmarks.launch_overhead --out "$OUT/launch_overhead.json" 2>&1 | tail -20 > "$OUT/overhead.log"
}
run_launcher() {
  # the region launcher before and after a change, one call: the launcher's GPU tests, its host cost per
  # call (benchmarks/launch_overhead.py) in this tree and in an older one, then each KG_LAUNCHER_JOBS file
  # judged by this tree and by the older one (job ids ending /new and /old; read back with
  # python -m benchmarks.arms). The older tree: git archive OLD evaluator regions benchmarks/__init__.py
  # benchmarks/launch_overhead.py | tar -x -C .device/old   (carry .device). KG_LAUNCHER_CONFIG replaces
  # the paper's EvalConfig overrides (e.g. '{"reference_compile": "off"}' for the project's own tasks).
  local old="${KG_OLD_TREE:-.device/old}" jobs name arm tree
  "$PY" -m pytest -q -p no:cacheprovider tests/evaluator/regions/test_launch.py \
    tests/evaluator/regions/test_native.py 2>&1 | tail -15 > "$OUT/launcher_tests.log"
  "$PY" -m benchmarks.launch_overhead --out "$OUT/overhead_new.json" > "$OUT/overhead.log" 2>&1
  (cd "$old" && PYTHONPATH="$PWD" "$PY" -m benchmarks.launch_overhead --out "$OUT/overhead_old.json") \
    >> "$OUT/overhead.log" 2>&1
  for jobs in ${KG_LAUNCHER_JOBS:-}; do
    name=$(basename "$jobs" .jsonl)
    for arm in new old; do  # each arm judged by its own tree's evaluator and launcher
      tree=$([ "$arm" = new ] && echo "$PWD" || (cd "$old" && pwd))
      sed "s#\"job_id\": \"\\([^\"]*\\)\"#\"job_id\": \"\\1/$arm\"#" "$jobs" > "/tmp/$name.$arm.jsonl"
      (cd "$tree" && PYTHONPATH="$tree" timeout -k 20 --signal=INT "${KG_LAUNCHER_BUDGET_S:-200}" "$PY" -m \
        evaluator run "/tmp/$name.$arm.jsonl" --out "$OUT/$name.verdicts.jsonl" --cache-dir "$CACHE/launcher_$arm" \
        --config "${KG_LAUNCHER_CONFIG:-$PAPER_CONFIG}") 2>&1 | tr '\r' '\n' | tail -5 >> "$OUT/launcher_judge.log"
    done
  done
}
run_throughput() {
  "$PY" -m benchmarks.evaluator_throughput --out-dir "$OUT" --cache-dir "$CACHE/throughput" \
    ${KG_THROUGHPUT_ARGS:-} 2>&1 | tee "$OUT/throughput.log"
}

case "$what" in
  suite) run_suite ;;
  suite_regions) run_suite_regions ;;
  corpus) run_corpus ;;
  regions) run_regions ;;
  regions_runs) run_regions_runs ;;
  alone) run_alone ;;
  regions_kb) run_regions_kb ;;
  shapes) run_shapes ;;
  baseline) run_baseline ;;
  profiles) run_profiles ;;
  throughput) run_throughput ;;
  paper) run_paper ;;
  kinds) run_kinds ;;
  fusion) run_fusion ;;
  judge) run_judge ;;
  overhead) run_overhead ;;
  launcher) run_launcher ;;
  all) run_suite; run_suite_regions; run_corpus; run_baseline; run_profiles; run_throughput ;;
  *) echo "unknown: $what" >&2; exit 2 ;;
esac
