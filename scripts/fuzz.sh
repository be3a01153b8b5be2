#!/usr/bin/env bash
# fuzz.sh - build the libFuzzer targets in tests/fuzz/ and run each one for a while.
#
#   npm run fuzz                          every target, FUZZ_SECONDS (default 60) each
#   FUZZ_SECONDS=600 npm run fuzz         longer
#   bash scripts/fuzz.sh forward mha      only these targets (tests/fuzz/fuzz_<name>.c)
#   FUZZ_DUMP=1 build/fuzz/fuzz_forward FILE   print the decoded case of one input
#
# Needs clang with libFuzzer (Debian 12: apt-get install -y clang libclang-rt-14-dev).
# Inputs that add coverage go to build/fuzz/corpus/<target>/ (not committed; the committed
# seeds in tests/fuzz/corpus/<target>/ are read too). An input that breaks the contract is
# written to build/fuzz/<target>-crash-<hash>, and the script says how to replay it.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
seconds="${FUZZ_SECONDS:-60}"
CC="${FUZZ_CC:-clang}"
out=build/fuzz

install_hint="install clang and libFuzzer: apt-get install -y clang libclang-rt-14-dev"
if ! command -v "$CC" >/dev/null 2>&1; then
  echo "fuzz.sh: $CC not found; $install_hint" >&2
  exit 1
fi
mkdir -p "$out"
probe="$out/.probe"
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > "$probe.c"
if ! "$CC" -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" 2> "$probe.log"; then
  echo "fuzz.sh: $CC cannot link a libFuzzer target (libFuzzer or the sanitizer runtimes are missing):" >&2
  sed 's/^/  /' "$probe.log" >&2
  echo "fuzz.sh: $install_hint" >&2
  exit 1
fi
rm -f "$probe" "$probe.c" "$probe.log"

sources=(c_src/attention.c c_src/rope.c)
[ -f c_src/mha.c ] && sources+=(c_src/mha.c)
# fuzz_stats: heads.c, which runs its jobs through parallel.c, which needs linear.c's kernels
sources+=(c_src/heads.c c_src/parallel.c c_src/linear.c)

if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for f in tests/fuzz/fuzz_*.c; do t="${f#tests/fuzz/fuzz_}"; targets+=("${t%.c}"); done
fi

# the same floating-point rules as the native and wasm builds (no contraction into FMA)
cflags=(-std=c11 -g -O1 -ffp-contract=off -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Ic_src)

failed=()
summary=()
for t in "${targets[@]}"; do
  src="tests/fuzz/fuzz_$t.c"
  [ -f "$src" ] || { echo "fuzz.sh: no target $src" >&2; exit 2; }
  echo "== $t: building"
  "$CC" "${cflags[@]}" "$src" "${sources[@]}" -o "$out/fuzz_$t" -lm
  mkdir -p "$out/corpus/$t" "tests/fuzz/corpus/$t"
  echo "== $t: fuzzing for ${seconds} s"
  log="$out/fuzz_$t.log"
  status=0
  "$out/fuzz_$t" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$out/$t-" \
    "$out/corpus/$t" "tests/fuzz/corpus/$t" > "$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  if [ "$status" -ne 0 ]; then
    grep -A3 -m1 -E '^contract violated|ERROR: (AddressSanitizer|libFuzzer|UndefinedBehaviorSanitizer)|runtime error' "$log" >&2 || tail -n 30 "$log" >&2
    crash=$(sed -n "s/.*Test unit written to \(.*\)$/\1/p" "$log" | tail -n 1)
    echo "fuzz.sh: $t FAILED (log $log)" >&2
    if [ -n "$crash" ]; then
      echo "  replay: $out/fuzz_$t $crash        (FUZZ_DUMP=1 prints the decoded inputs)" >&2
      echo "  keep it as a regression: cp $crash tests/fuzz/regressions/$t/" >&2
    fi
    failed+=("$t")
    summary+=("$(printf '%-8s FAILED  %10s runs  %6s exec/s' "$t" "${runs:-?}" "${rate:-?}")")
  else
    summary+=("$(printf '%-8s ok      %10s runs  %6s exec/s' "$t" "${runs:-?}" "${rate:-?}")")
  fi
done

echo
echo "fuzz.sh: ${seconds} s per target"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
  exit 1
fi
