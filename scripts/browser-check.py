#!/usr/bin/env python3
"""Checks report.html as a browser rendered it against the CSV files beside it.

Reads the DOM Chromium dumped (--dump-dom) and its console log, and fails when:
  - the page has a <script> element, or the console shows an uncaught error or a failed load;
  - a chart section (HTMLReport.chartIds) is missing, or has no <svg> with content while its CSV has rows
    (a "no data" note is accepted only where the CSV really has nothing to draw);
  - a number on the page differs from its CSV cell: every element carrying data-col names its source with
    data-table and data-key-<column> attributes (one CSV row), or data-sum (the exact sum over the rows the
    keys select, of data-col minus data-minus when given, times data-times when given: net new MRR, ARR);
    data-format="percent" shows the cell as a percentage (x 100, one decimal, half away from zero, then "%"),
    data-format="numerator" shows the count n with n / data-denominator (a column of the row) equal to the rate
    cell; see Sources/Reporting/HTMLSource.swift;
  - a CSV row a chart must show is not on the page (every total row of subscriptions_monthly, every row of
    retention_cohorts, trial_conversion and grace_recovery, every month and currency of revenue_monthly, every
    row of mrr_movements, or with converted columns every month and platform of it).

Usage: browser-check.py --dom DOM.html --console CONSOLE.log --csv-dir DIR [--source report.html]
Exit status 0 when everything matches, 1 with the differences listed otherwise.
"""
import argparse
import csv
import os
import re
import sys
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from html.parser import HTMLParser

CHART_IDS = ["chart-active", "chart-churn", "chart-movement", "chart-products", "chart-retention", "chart-trials",
             "chart-grace", "chart-revenue", "chart-mrr"]
KEYS = {
    "subscriptions_monthly": ["month", "platform", "product_id"],
    "revenue_monthly": ["month", "platform", "product_id", "currency"],
    "mrr_movements": ["month", "platform", "currency"],
    "retention_cohorts": ["cohort_month", "platform", "duration", "period"],
    "trial_conversion": ["cohort_month", "platform", "product_id"],
    "grace_recovery": ["month", "platform"],
}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


class Page(HTMLParser):
    """Collects scripts, chart sections (with their SVG content) and tagged figures (with their text)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []          # open elements: (tag, attributes)
        self.scripts = 0
        self.external = []       # src/href values that leave the page
        self.sections = {}       # id -> {"source", "empty", "svg_children"}
        self.figures = []        # {"attrs", "text"}
        self.open_figures = []   # (depth, figure)

    def handle_starttag(self, tag, attrs):
        attributes = {name: (value or "") for name, value in attrs}
        if tag == "script":
            self.scripts += 1
        for name in ("src", "href", "xlink:href"):
            value = attributes.get(name)
            if value is not None and not value.startswith("#"):
                self.external.append(f"<{tag} {name}={value!r}>")
        section = self.current_section()
        if tag == "section" and "chart" in attributes.get("class", "").split():
            self.sections[attributes.get("id", "")] = {
                "source": attributes.get("data-source", ""), "empty": "data-empty" in attributes, "svg_children": 0}
        elif section is not None and any(open_tag == "svg" for open_tag, _ in self.stack) and tag != "svg":
            self.sections[section]["svg_children"] += 1
        if "data-col" in attributes:
            figure = {"attrs": attributes, "text": ""}
            self.figures.append(figure)
            self.open_figures.append((len(self.stack), figure))
        if tag not in VOID:
            self.stack.append((tag, attributes))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID and self.stack and self.stack[-1][0] == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack:
            open_tag, _ = self.stack.pop()
            while self.open_figures and self.open_figures[-1][0] >= len(self.stack):
                self.open_figures.pop()
            if open_tag == tag:
                break

    def handle_data(self, data):
        for _, figure in self.open_figures:
            figure["text"] += data

    def current_section(self):
        for tag, attributes in reversed(self.stack):
            if tag == "section" and "chart" in attributes.get("class", "").split():
                return attributes.get("id", "")
        return None


def read_tables(directory):
    tables = {}
    for name in KEYS:
        path = os.path.join(directory, name + ".csv")
        if not os.path.exists(path):
            continue
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        tables[name] = rows
    return tables


def percent(cell):
    """The page's text of a rate cell as a percentage: '0.057471' -> '5.7%', '' -> ''."""
    if cell == "":
        return ""
    value = (Decimal(cell) * 100).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    return ("0.0" if value == 0 else str(value)) + "%"


def rate_text(numerator, denominator):
    """A rate as the CSV writes it (six decimals), '' for a zero denominator."""
    if denominator == 0:
        return ""
    return "%.6f" % (numerator / denominator)


def check_figure(figure, tables):
    """None when the figure shows its source's value, else a description of the difference."""
    attrs, text = figure["attrs"], figure["text"].strip()
    table = attrs.get("data-table", "")
    column = attrs["data-col"]
    if table not in tables:
        return f"{table}.{column}: the page cites a table with no CSV file"
    key = {name[len("data-key-"):].replace("-", "_"): value for name, value in attrs.items() if name.startswith("data-key-")}
    rows = [row for row in tables[table] if all(row.get(k) == v for k, v in key.items())]
    where = f"{table}.csv {column} where " + ", ".join(f"{k}={v!r}" for k, v in key.items())
    if rows and column not in rows[0]:
        return f"{where}: no such column"
    if "data-sum" in attrs:
        minus = attrs.get("data-minus")
        if rows and minus is not None and minus not in rows[0]:
            return f"{where}: no column {minus!r} to subtract"
        try:
            expected = sum((Decimal(row[column]) - (Decimal(row[minus]) if minus else 0) for row in rows), Decimal(0))
            expected *= Decimal(attrs.get("data-times", "1"))
        except InvalidOperation:
            return f"{where}: a cell is not a number, cannot sum"
        if minus:
            where += f" minus {minus}"
        if "data-times" in attrs:
            where += f" times {attrs['data-times']}"
        if not NUMBER.match(text) or Decimal(text) != expected:
            return f"{where}: page shows sum {text!r}, CSV rows sum to {expected} ({len(rows)} rows)"
        return None
    if sorted(key) != sorted(KEYS[table]):
        return f"{where}: key columns {sorted(key)} are not the table's key {KEYS[table]}"
    if len(rows) != 1:
        return f"{where}: {len(rows)} CSV rows match, expected exactly 1"
    form = attrs.get("data-format")
    if form == "percent":
        try:
            expected = percent(rows[0][column])
        except InvalidOperation:
            return f"{where}: the CSV cell {rows[0][column]!r} is not a rate"
        if expected != text:
            return f"{where}: page shows {text!r}, the CSV cell {rows[0][column]!r} as a percentage is {expected!r}"
        return None
    if form == "numerator":
        denominator = attrs.get("data-denominator", "")
        if denominator not in rows[0]:
            return f"{where}: no denominator column {denominator!r}"
        if not re.match(r"^\d+$", text):
            return f"{where}: page shows {text!r}, not a count"
        shown = rate_text(int(text), int(rows[0][denominator]))
        if shown != rows[0][column]:
            return (f"{where}: page shows {text!r} of {denominator} {rows[0][denominator]}, which is the rate {shown!r},"
                    f" CSV has {rows[0][column]!r}")
        return None
    if form is not None:
        return f"{where}: unknown data-format {form!r}"
    if rows[0][column] != text:
        return f"{where}: page shows {text!r}, CSV has {rows[0][column]!r}"
    return None


def chart_has_data(source, tables):
    rows = tables.get(source, [])
    if source == "revenue_monthly":
        return any(row["currency"] for row in rows)
    return bool(rows)


def coverage(figures, tables):
    """CSV rows every chart must show, missing from the page."""
    shown = {}
    for figure in figures:
        attrs = figure["attrs"]
        key = tuple(sorted((name, value) for name, value in attrs.items() if name.startswith("data-key-")))
        shown.setdefault((attrs.get("data-table"), attrs["data-col"], "data-sum" in attrs), set()).add(key)

    def key_of(row, columns):
        return tuple(sorted(("data-key-" + column.replace("_", "-"), row[column]) for column in columns))

    missing = []
    required = [
        ("subscriptions_monthly", "churn_rate", lambda row: row["product_id"] == "all" and row["platform"] == "all"),
        ("subscriptions_monthly", "active_end", lambda row: True),
        ("retention_cohorts", "retention_rate", lambda row: True),
        ("trial_conversion", "conversion_rate", lambda row: True),
        ("grace_recovery", "recovery_rate", lambda row: True),
    ]
    for table, column, wanted in required:
        present = shown.get((table, column, False), set())
        for row in tables.get(table, []):
            if wanted(row) and key_of(row, KEYS[table]) not in present:
                missing.append(f"{table}.csv row {[row[k] for k in KEYS[table]]}: {column} not on the page")
    sums = shown.get(("revenue_monthly", "gross", True), set())
    for row in tables.get("revenue_monthly", []):
        if row["currency"] and key_of(row, ["month", "currency"]) not in sums:
            missing.append(f"revenue_monthly.csv month {row['month']} currency {row['currency']}: gross total not on the page")
    # With --currency: every month whose rows all have a rate, totalled in the reporting currency.
    revenue = tables.get("revenue_monthly", [])
    if revenue and "gross_converted" in revenue[0]:
        converted = shown.get(("revenue_monthly", "gross_converted", True), set())
        rated = {}
        for row in revenue:
            key = key_of(row, ["month"])
            rated[key] = rated.get(key, True) and row["gross_converted"] != ""
        for key, complete in rated.items():
            if complete and key not in converted:
                missing.append(f"revenue_monthly.csv {dict(key)}: gross_converted total not on the page")
    # Unpriced transactions: the banner names each product with its count.
    unpriced = shown.get(("revenue_monthly", "unpriced_transactions", True), set())
    for row in revenue:
        if row["unpriced_transactions"] not in ("", "0") and key_of(row, ["platform", "product_id"]) not in unpriced:
            missing.append(f"revenue_monthly.csv {row['platform']} {row['product_id']}: unpriced transactions not in the banner")
    # MRR movements: every row's mrr_end in its currency's waterfall table; with --currency, every month and
    # platform whose rows all have a rate in the platform's converted waterfall.
    movements = tables.get("mrr_movements", [])
    if movements and "mrr_end_converted" in movements[0]:
        converted = shown.get(("mrr_movements", "mrr_end_converted", True), set())
        rated = {}
        for row in movements:
            key = key_of(row, ["month", "platform"])
            rated[key] = rated.get(key, True) and row["mrr_end_converted"] != ""
        for key, complete in rated.items():
            if complete and key not in converted:
                missing.append(f"mrr_movements.csv {dict(key)}: mrr_end_converted total not on the page")
    else:
        present = shown.get(("mrr_movements", "mrr_end", False), set())
        for row in movements:
            if key_of(row, KEYS["mrr_movements"]) not in present:
                missing.append(f"mrr_movements.csv row {[row[k] for k in KEYS['mrr_movements']]}: mrr_end not on the page")
    return sorted(set(missing))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dom", required=True)
    parser.add_argument("--console", required=True)
    parser.add_argument("--csv-dir", required=True)
    parser.add_argument("--source", help="report.html as written, checked for <script> too")
    args = parser.parse_args()

    problems = []
    with open(args.dom, encoding="utf-8") as handle:
        dom = handle.read()
    page = Page()
    page.feed(dom)
    page.close()
    if args.source:
        with open(args.source, encoding="utf-8") as handle:
            source = handle.read()
        if re.search(r"<script\b", source, re.IGNORECASE):
            problems.append("report.html contains a <script> element")
        if re.search(r"https?:", source, re.IGNORECASE):
            problems.append("report.html contains an http(s) URL")
    if page.scripts:
        problems.append(f"the rendered page has {page.scripts} <script> element(s)")
    problems += [f"external reference {reference}" for reference in page.external]
    with open(args.console, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if "Uncaught" in line or "net::ERR_" in line or "Failed to load resource" in line:
                problems.append("console: " + line.strip())

    tables = read_tables(args.csv_dir)
    for name in KEYS:
        if name not in tables:
            problems.append(f"{name}.csv missing in {args.csv_dir}")
    for chart in CHART_IDS:
        section = page.sections.get(chart)
        if section is None:
            problems.append(f"chart {chart}: missing")
        elif section["svg_children"] == 0:
            if not section["empty"]:
                problems.append(f"chart {chart}: no <svg> with content")
            elif chart_has_data(section["source"], tables):
                problems.append(f"chart {chart}: shows 'no data' but {section['source']}.csv has rows to draw")
    for figure in page.figures:
        difference = check_figure(figure, tables)
        if difference:
            problems.append(difference)
    problems += coverage(page.figures, tables)

    charts = sum(1 for chart in CHART_IDS if page.sections.get(chart, {}).get("svg_children"))
    if problems:
        print(f"browser-check: FAILED, {len(problems)} problem(s):", file=sys.stderr)
        for problem in problems[:200]:
            print("  " + problem, file=sys.stderr)
        if len(problems) > 200:
            print(f"  ... and {len(problems) - 200} more", file=sys.stderr)
        return 1
    print(f"browser-check: OK: {len(CHART_IDS)} charts present ({charts} drawn), {len(page.figures)} numbers equal their"
          " CSV cells, no script, no console error")
    return 0


if __name__ == "__main__":
    sys.exit(main())
