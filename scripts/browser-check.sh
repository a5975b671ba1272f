#!/usr/bin/env bash
# Opens report.html of a report directory in headless Chromium, as an analyst's browser would, and checks what it
# rendered: no script and no console error, every chart present with its SVG, and every number on the page equal
# to its cell in the CSV files beside it (scripts/browser-check.py says exactly what is compared).
#
# Usage: scripts/browser-check.sh REPORT_DIR [OUTPUT_DIR]
#   REPORT_DIR  holds report.html and the CSV files (e.g. Reports/ after `make run`)
#   OUTPUT_DIR  where the screenshot (report.png, 1280x4000), the rendered DOM (report.dom.html) and the browser
#               log (console.log) go; default REPORT_DIR/browser-check
# Installs Debian's chromium when no Chromium is found. Exit status 0 when the page checks out, 1 otherwise.
set -euo pipefail

report_dir=${1:?usage: scripts/browser-check.sh REPORT_DIR [OUTPUT_DIR]}
output_dir=${2:-$report_dir/browser-check}
page="$report_dir/report.html"
if [ ! -f "$page" ]; then
  echo "browser-check: $page not found (run 'make run' or 'subledger report --format html' first)" >&2
  exit 1
fi

browser=""
for candidate in chromium chromium-browser google-chrome; do
  if command -v "$candidate" >/dev/null 2>&1; then browser=$candidate; break; fi
done
if [ -z "$browser" ]; then
  echo "browser-check: installing chromium" >&2
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq && $sudo apt-get install -y -qq chromium
  browser=chromium
fi

mkdir -p "$output_dir"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
url="file://$(cd "$report_dir" && pwd)/report.html"
# A fresh profile and no background traffic: the page must stand on its own, from disk.
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --no-default-browser-check
       --disable-background-networking --disable-extensions --user-data-dir="$profile")

timeout 120 "$browser" "${flags[@]}" --enable-logging=stderr --v=0 --dump-dom "$url" \
  >"$output_dir/report.dom.html" 2>"$output_dir/console.log"
timeout 120 "$browser" "${flags[@]}" --enable-logging=stderr --v=0 --screenshot="$output_dir/report.png" \
  --window-size=1280,4000 "$url" >/dev/null 2>>"$output_dir/console.log"
if [ ! -s "$output_dir/report.dom.html" ] || [ ! -s "$output_dir/report.png" ]; then
  echo "browser-check: $browser produced no DOM or no screenshot; see $output_dir/console.log" >&2
  exit 1
fi

python3 "$(dirname "$0")/browser-check.py" --dom "$output_dir/report.dom.html" --console "$output_dir/console.log" \
  --csv-dir "$report_dir" --source "$page"
echo "browser-check: screenshot $output_dir/report.png, DOM $output_dir/report.dom.html"
