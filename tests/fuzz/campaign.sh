#!/usr/bin/env bash
# A fuzzing campaign over every libFuzzer target, for a given time per target; prints the
# executions and crashes of each and the totals, and exits 1 if any target crashed.
#
#   tests/fuzz/campaign.sh SECONDS [BUILD_DIR] [JOBS]
#
# BUILD_DIR (default build-fuzz) is configured with clang, libFuzzer and ASan+UBSan when it does
# not exist yet. JOBS targets run at once (default: the number of cores). Each target starts
# from its committed seeds (tests/fuzz/corpus/TARGET, never written) and keeps what it finds in
# BUILD_DIR/campaign/corpus/TARGET; crashes go to BUILD_DIR/campaign/crashes/TARGET.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:?usage: tests/fuzz/campaign.sh SECONDS [BUILD_DIR] [JOBS]}
build=${2:-build-fuzz}
jobs=${3:-$(nproc)}
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DB2ND_FUZZ_ENGINE=libfuzzer -DB2ND_SANITIZE=address,undefined -DB2ND_BUILD_EXAMPLES=OFF \
    -DB2ND_BUILD_BENCHMARKS=OFF >/dev/null
fi
mapfile -t targets < <(sed -n 's/^ *b2nd_add_fuzzer(\(fuzz_[a-z_0-9]*\).*/\1/p' tests/fuzz/CMakeLists.txt)
cmake --build "$build" -j"$jobs" --target "${targets[@]}" >/dev/null
out="$build/campaign"
mkdir -p "$out/logs"

run_one() {
  local t=$1
  mkdir -p "$out/corpus/$t" "$out/crashes/$t"
  local seeds=tests/fuzz/corpus/$t
  [ -d "$seeds" ] || seeds=
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/tests/fuzz/$t" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
    -rss_limit_mb=4096 -artifact_prefix="$out/crashes/$t/" "$out/corpus/$t" $seeds \
    >"$out/logs/$t.log" 2>&1 || true
}

pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 1; done
done
wait

printf '%-22s %14s %8s %8s\n' target executions exec/s crashes
total=0
crashes=0
for t in "${targets[@]}"; do
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/logs/$t.log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/logs/$t.log" | tail -1)
  c=$(find "$out/crashes/$t" -type f | wc -l)
  printf '%-22s %14s %8s %8s\n' "$t" "${execs:-0}" "${rate:-0}" "$c"
  total=$((total + ${execs:-0}))
  crashes=$((crashes + c))
done
printf '%-22s %14s %8s %8s\n' total "$total" "" "$crashes"
[ "$crashes" -eq 0 ]
