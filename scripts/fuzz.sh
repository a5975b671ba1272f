#!/usr/bin/env bash
# Runs every libFuzzer harness of Fuzz/ for FUZZ_SECONDS each (default 60), one after the other, and fails on any
# crash, hang (10 s on one input) or out-of-memory (2 GB). Seeds: cut from a small `subledger simulate` output
# (generated once into .build-fuzz/work, not committed), the hand-made seeds in Fuzz/Seeds/<target>/ and every
# saved finding in Fuzz/Regressions/<target>/. A finding is left in .build-fuzz/work/artifacts/<target>/: add
# it to Fuzz/Regressions/<target>/ (with its .expected outcome) once fixed, so that `make test` replays it.
# FUZZ_TARGETS selects harnesses (names as in Fuzz/Regressions/); FUZZ_RUNS (optional) also stops each after
# that many executions, whichever comes first. The table of executions and coverage goes to .build-fuzz/work/summary.md.
set -uo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH="${FUZZ_SECONDS:-60}"
TARGETS="${FUZZ_TARGETS:-json record lines document gzip tar zip jws-decode jws-verify apple google}"
BIN=.build-fuzz/release
WORK=.build-fuzz/work
mkdir -p "$WORK"
# A finding aborts; Swift's own crash backtracer would then race AddressSanitizer's report.
export SWIFT_BACKTRACE=enable=no

harness() {
    case "$1" in
        json) echo FuzzJSON ;; record) echo FuzzRecord ;; lines) echo FuzzLines ;; document) echo FuzzDocument ;;
        gzip) echo FuzzGzip ;; tar) echo FuzzTar ;; zip) echo FuzzZip ;; jws-decode) echo FuzzJWSDecode ;;
        jws-verify) echo FuzzJWSVerify ;; apple) echo FuzzApple ;; google) echo FuzzGoogle ;;
        *) echo "unknown fuzz target $1" >&2; exit 2 ;;
    esac
}

failed=()
echo "| harness | executions | coverage (cov) | features (ft) | corpus | result |" > "$WORK/summary.md"
echo "|---|---:|---:|---:|---:|---|" >> "$WORK/summary.md"
for target in $TARGETS; do
    program="$BIN/$(harness "$target")"
    seeds="$WORK/seeds/$target"
    corpus="$WORK/corpus/$target"
    artifacts="$WORK/artifacts/$target/"
    mkdir -p "$corpus" "$artifacts" "Fuzz/Seeds/$target" "Fuzz/Regressions/$target"
    if [ ! -d "$seeds" ]; then
        ASAN_OPTIONS=detect_leaks=0 "$program" -write-seeds "$WORK/simulation" "$seeds" \
            || { failed+=("$target (seeds)"); continue; }
    fi
    limit=(-max_total_time="$SECONDS_EACH")
    if [ -n "${FUZZ_RUNS:-}" ]; then limit+=(-runs="$FUZZ_RUNS"); fi
    log="$WORK/$target.log"
    echo "fuzz $target: ${limit[*]}"
    # Inputs named *.expected are outcomes, not inputs: libFuzzer reads every file, so the regression inputs go
    # through a copy without them.
    regressions="$WORK/regressions/$target"
    rm -rf "$regressions" && mkdir -p "$regressions"
    find "Fuzz/Regressions/$target" -type f ! -name '*.expected' -exec cp {} "$regressions/" \;
    "$program" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$artifacts" \
        "$corpus" "$seeds" "Fuzz/Seeds/$target" "$regressions" > "$log" 2>&1
    status=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
    ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
    size=$(find "$corpus" -type f | wc -l)
    if [ $status -eq 0 ]; then result=clean; else
        result="FINDING (exit $status, see $log and $artifacts)"
        failed+=("$target")
        grep -E 'ERROR|FuzzFailure|Fatal error|SUMMARY|Test unit written' "$log" | head -8
    fi
    echo "| $target | ${runs:-?} | ${cov:-?} | ${ft:-?} | $size | $result |" | tee -a "$WORK/summary.md"
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzzing found problems in: ${failed[*]}" >&2
    exit 1
fi
echo "every harness ran clean; table in $WORK/summary.md"
