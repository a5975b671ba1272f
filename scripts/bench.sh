#!/usr/bin/env bash
# `make bench`: the nightly job measured against its floor (gzip -dc of the same archives) and its peer (an
# analyst's DuckDB script, ../shared/bench/duckdb_peer.py), on a simulated data set of 20,000 subscribers over
# 24 months, and ingest again on a set 5 times larger to show that memory stays flat and time grows linearly.
# Data sets and the peer's virtual environment are cached in .bench/ (outside git). A benchmark, not a test:
# it prints figures and fails only when a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=.build/release/subledger
BENCH=.bench
# The peer sits next to the main checkout (../shared from it); a worktree finds it through the common git dir.
PEER=${BENCH_PEER:-../shared/bench/duckdb_peer.py}
[ -f "$PEER" ] || PEER="$(git rev-parse --path-format=absolute --git-common-dir)/../../shared/bench/duckdb_peer.py"
SUBSCRIBERS=${BENCH_SUBSCRIBERS:-20000}
MONTHS=${BENCH_MONTHS:-24}
SCALE=${BENCH_SCALE:-5}
# Each timed step of the floor and of both ingests runs this many times and the median is reported: on this
# 2-core VM one run of the same build differed from the next by up to 20%.
RUNS=${BENCH_RUNS:-3}
mkdir -p "$BENCH"

log() { printf '%s\n' "$*" >&2; }

# Generates a data set once; later runs reuse it.
dataset() {
  local dir=$1 subscribers=$2
  # simulate writes truth.json last: without it the set is incomplete (an interrupted run) and made again.
  if [ ! -f "$dir/truth.json" ]; then
    log "generating $subscribers subscribers over $MONTHS months into $dir (once)"
    rm -rf "$dir"
    "$BIN" simulate --out "$dir" --subscribers "$subscribers" --months "$MONTHS" --seed 7 >/dev/null
  fi
}

# Runs a command under /usr/bin/time -v; prints "wall_seconds peak_rss_kb".
measure() {
  local out=$1; shift
  /usr/bin/time -v -o "$out.time" "$@" >"$out.stdout" 2>"$out.stderr" || {
    local rc=$?
    # ingest exits 1 when it quarantined records, which the simulated noise guarantees.
    [ $rc -eq 1 ] || { log "failed ($rc): $*"; cat "$out.stderr" >&2; exit 1; }
  }
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$out.time" |
    awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out.time")
  echo "$wall $rss"
}

# The median of RUNS figures, one per line.
median() { sort -g | sed -n "$(( (RUNS + 1) / 2 ))p"; }

# `measure` of an ingest into a new ledger at `ledger`, RUNS times; prints "median_wall_seconds peak_rss_kb" (the
# largest RSS of the runs). The last run's ledger and output files stay.
measure_ingest() {
  local out=$1 ledger=$2; shift 2
  local walls="" rss=0 wall peak
  for _ in $(seq "$RUNS"); do
    rm -f "$ledger"*
    read -r wall peak < <(measure "$out" "$@")
    walls+="$wall"$'\n'
    [ "$peak" -gt "$rss" ] && rss=$peak
  done
  echo "$(printf '%s' "$walls" | median) $rss"
}

# Decompresses every archive with the standard tools only: nothing can ingest faster than this. gzip gives up
# on the rest of its arguments at a damaged file (the data set has some on purpose), so the damaged ones are
# found first (untimed, cached) and decompressed one by one; the intact ones go to one gzip. Only the outer
# compression is undone (gzip members inside a .tar.gz stay compressed), so the floor is if anything low.
decompress_floor() {
  local dir=$1
  if [ ! -f "$dir/gzip-damaged" ]; then
    : >"$dir/gzip-intact.tmp"; : >"$dir/gzip-damaged.tmp"
    find "$dir/archives" -type f \( -name '*.gz' -o -name '*.tgz' \) -print0 | sort -z |
      while IFS= read -r -d '' f; do
        if gzip -t "$f" 2>/dev/null; then printf '%s\0' "$f" >>"$dir/gzip-intact.tmp"
        else printf '%s\0' "$f" >>"$dir/gzip-damaged.tmp"; fi
      done
    mv "$dir/gzip-intact.tmp" "$dir/gzip-intact"; mv "$dir/gzip-damaged.tmp" "$dir/gzip-damaged"
  fi
  local start end
  start=$(date +%s.%N)
  xargs -0 -r gzip -dc <"$dir/gzip-intact" >/dev/null
  xargs -0 -r -n1 gzip -dc <"$dir/gzip-damaged" >/dev/null 2>&1 || true
  find "$dir/archives" -type f \( -name '*.jsonl' -o -name '*.ndjson' -o -name '*.json' -o -name '*.tar' \) -print0 | xargs -0 -r cat >/dev/null
  find "$dir/archives" -type f -name '*.zip' -print0 | xargs -0 -r -n1 unzip -p >/dev/null 2>&1 || true
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

# Bytes of JSON text in the archives once every layer is decompressed (gzip inside tar included), counted once
# per data set and cached next to it.
uncompressed_bytes() {
  local dir=$1
  if [ ! -f "$dir/json-bytes" ]; then
    python3 - "$dir/archives" >"$dir/json-bytes.tmp" <<'PY'
import gzip, os, sys, tarfile, zipfile, zlib

def inflate(data):
    """All complete gzip members of data, as far as they go (a damaged archive counts up to the damage)."""
    out, total = data, 0
    while out:
        d = zlib.decompressobj(31)
        try:
            total += len(d.decompress(out))
        except zlib.error:
            break
        out = d.unused_data
    return total

def member_bytes(name, data):
    if name.endswith(('.gz', '.tgz')) and not name.endswith(('.tar.gz', '.tgz')):
        return inflate(data)
    return len(data)

total = 0
for root, _, files in os.walk(sys.argv[1]):
    for name in files:
        path = os.path.join(root, name)
        try:
            if name.endswith(('.tar.gz', '.tgz', '.tar')):
                with tarfile.open(path, 'r:*') as tf:
                    for m in tf:
                        if m.isfile():
                            total += member_bytes(m.name, tf.extractfile(m).read())
            elif name.endswith('.zip'):
                with zipfile.ZipFile(path) as zf:
                    for n in zf.namelist():
                        total += member_bytes(n, zf.read(n))
            elif name.endswith('.gz'):
                total += inflate(open(path, 'rb').read())
            else:
                total += os.path.getsize(path)
        except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, zlib.error):
            pass  # the damaged archives of the data set: what precedes the damage is not worth the code
print(total)
PY
    mv "$dir/json-bytes.tmp" "$dir/json-bytes"
  fi
  cat "$dir/json-bytes"
}

peer_env() {
  if [ ! -x "$BENCH/venv/bin/python" ]; then
    log "installing duckdb into $BENCH/venv (once)"
    python3 -m venv "$BENCH/venv"
    "$BENCH/venv/bin/pip" install -q duckdb
  fi
}

command -v bc >/dev/null || { apt-get install -y -qq bc >/dev/null; }
command -v unzip >/dev/null || { apt-get install -y -qq unzip >/dev/null; }

base="$BENCH/data-$SUBSCRIBERS"
large="$BENCH/data-$((SUBSCRIBERS * SCALE))"
dataset "$base" "$SUBSCRIBERS"
peer_env

files=$(find "$base/archives" -type f | wc -l)
compressed=$(du -sb "$base/archives" | cut -f1)
raw=$(uncompressed_bytes "$base")
floor=$(for _ in $(seq "$RUNS"); do decompress_floor "$base"; done | median)

read -r ingest_wall ingest_rss < <(measure_ingest "$BENCH/ingest" "$BENCH/ingest.sqlite" "$BIN" ingest --json \
  --db "$BENCH/ingest.sqlite" --apple-root-ca "$base/apple-root.der" "$base/archives")
echo "$ingest_wall" >"$BENCH/ingest.median"  # scripts/bench-scale.sh sets the PostgreSQL ingests beside it
records=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["records"]["read"])' "$BENCH/ingest.stdout")
ledger=$(du -cb "$BENCH"/ingest.sqlite* | tail -1 | cut -f1)
read -r report_wall report_rss < <(measure "$BENCH/report" "$BIN" report --db "$BENCH/ingest.sqlite" \
  --out "$BENCH/reports" --prices "$base/prices.csv")
# Rebuilds every fact from the payloads the ledger keeps (no archive read), with the same options.
read -r reprocess_wall reprocess_rss < <(measure "$BENCH/reprocess" "$BIN" reprocess --db "$BENCH/ingest.sqlite" \
  --apple-root-ca "$base/apple-root.der")
read -r peer_wall peer_rss < <(measure "$BENCH/peer" "$BENCH/venv/bin/python" "$PEER" "$base/archives" "$BENCH/peer.duckdb")

dataset "$large" "$((SUBSCRIBERS * SCALE))"
large_raw=$(uncompressed_bytes "$large")
read -r large_wall large_rss < <(measure_ingest "$BENCH/large" "$BENCH/large.sqlite" "$BIN" ingest --json \
  --db "$BENCH/large.sqlite" --apple-root-ca "$large/apple-root.der" "$large/archives")
large_records=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["records"]["read"])' "$BENCH/large.stdout")

python3 - "$files" "$compressed" "$raw" "$records" "$floor" "$ingest_wall" "$ingest_rss" "$report_wall" \
  "$report_rss" "$peer_wall" "$peer_rss" "$large_raw" "$large_records" "$large_wall" "$large_rss" "$SCALE" \
  "$ledger" "$reprocess_wall" "$reprocess_rss" <<'PY'
import sys
(files, compressed, raw, records, floor, iw, irss, rw, rrss, pw, prss, lraw, lrec, lw, lrss, scale,
 ledger, pw2, prss2) = sys.argv[1:]
files, compressed, raw, records, lraw, lrec, ledger = map(int, (files, compressed, raw, records, lraw, lrec, ledger))
floor, iw, rw, pw, lw, pw2 = map(float, (floor, iw, rw, pw, lw, pw2))
irss, rrss, prss, lrss, prss2 = (int(x) / 1024 for x in (irss, rrss, prss, lrss, prss2))
mb = raw / 1e6
print(f"data set: {files} archives, {compressed/1e6:.0f} MB compressed, {mb:.0f} MB of JSON, {records} records")
print()
print(f"| step | wall s | MB/s | records/s | peak RSS MB |")
print(f"|---|---:|---:|---:|---:|")
print(f"| gzip -dc (floor) | {floor:.1f} | {mb/floor:.0f} | | |")
print(f"| subledger ingest | {iw:.1f} | {mb/iw:.0f} | {records/iw:.0f} | {irss:.0f} |")
print(f"| subledger report | {rw:.1f} | | | {rrss:.0f} |")
print(f"| subledger reprocess | {pw2:.1f} | {mb/pw2:.0f} | {records/pw2:.0f} | {prss2:.0f} |")
print(f"| ingest + report | {iw+rw:.1f} | | | |")
print(f"| DuckDB peer | {pw:.1f} | {mb/pw:.0f} | {records/pw:.0f} | {prss:.0f} |")
print(f"| ingest x{scale} data ({lraw/1e6:.0f} MB, {lrec} records) | {lw:.1f} | {lraw/1e6/lw:.0f} | {lrec/lw:.0f} | {lrss:.0f} |")
print()
def verdict(ok):
    return "met" if ok else "NOT met"
print(f"ingest / gzip -dc: {iw/floor:.2f} (target <= 2, issue 14: {verdict(iw/floor <= 2)}; "
      f"<= 1.5, issue 17: {verdict(iw/floor <= 1.5)})")
print(f"(ingest + report) / peer: {(iw+rw)/pw:.2f} (target < 0.5: {verdict((iw+rw)/pw < 0.5)}; "
      f"<= 0.4, issue 17: {verdict((iw+rw)/pw <= 0.4)})")
print(f"ledger: {ledger/1e6:.0f} MB for {compressed/1e6:.0f} MB of archives: {ledger/compressed:.2f} x "
      f"(target <= 1.5: {verdict(ledger/compressed <= 1.5)})")
print(f"reprocess / ingest: {pw2/iw:.2f} (target <= 1: {verdict(pw2 <= iw)})")
print(f"peak RSS: ingest {irss:.0f} MB, report {rrss:.0f} MB, ingest x{scale} {lrss:.0f} MB "
      f"(target < 256 MB: {verdict(max(irss, rrss, lrss) < 256)})")
growth = (lw / iw) / (lraw / raw)
print(f"x{scale} data: time x{lw/iw:.2f} for x{lraw/raw:.2f} the JSON "
      f"(linear within 15%: {verdict(growth <= 1.15)}; within 10%, issue 17: {verdict(growth <= 1.1)}), "
      f"peak RSS x{lrss/irss:.2f} (flat, under 256 MB: {'met' if lrss < 256 else 'NOT met'})")
PY
