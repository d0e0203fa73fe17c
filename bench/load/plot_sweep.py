#!/usr/bin/env python3
"""Latency (p50, p99) against achieved throughput, from the JSON of `tensord-load --sweep`.

    tensord-load --address=HOST:PORT --sweep=1000,2000,4000,8000 --json=sweep.json
    bench/load/plot_sweep.py sweep.json -o sweep.svg            # or .png (matplotlib)
    bench/load/plot_sweep.py small.json download.json -o knee.svg --title "tensord knees"

Each JSON file is one series (its label: the file's workloads, or --label). The plot is drawn
with matplotlib when it can be imported, else with gnuplot when it is installed, else written as
an SVG by this script itself (--backend chooses). A table of the points goes to stdout, with the
knee: the first rate from which p99 stays above 3x the median p99 of the rates below it
(or the server falls below 90% of the rate).
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile


def load_series(path, workload, label):
    with open(path) as f:
        report = json.load(f)
    points = []
    for p in report.get("points", []):
        stats = p["workloads"][workload] if workload else p["total"]
        lat = stats["latency_us"]
        if stats["ops"] == 0:
            continue
        points.append({"rate": p.get("rate") or stats["ops_per_s"],
                       "achieved": stats["ops_per_s"], "p50": lat["p50"], "p99": lat["p99"],
                       "errors": stats["error_count"]})
    if not label:
        names = [w["name"] for w in report.get("config", {}).get("workloads", [])]
        label = workload or "+".join(names) or os.path.basename(path)
    return label, points


def knee(points):
    """The first rate from which p99 stays above 3x the median p99 of the rates below it, or
    where the server no longer achieves 90% of the rate: a noisy point alone is no knee."""
    for i, p in enumerate(points):
        if p["achieved"] < 0.9 * p["rate"]:
            return p
        if i == 0:
            continue
        below = sorted(q["p99"] for q in points[:i])
        threshold = 3 * below[len(below) // 2]
        if all(q["p99"] > threshold for q in points[i:]):
            return p
    return None


def plot_matplotlib(series, out, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 5))
    for i, (label, pts) in enumerate(series):
        x = [p["achieved"] for p in pts]
        color = f"C{i}"
        ax.plot(x, [p["p50"] for p in pts], "o--", color=color, label=f"{label} p50")
        ax.plot(x, [p["p99"] for p in pts], "s-", color=color, label=f"{label} p99")
    ax.set_yscale("log")
    ax.set_xlabel("achieved throughput (ops/s)")
    ax.set_ylabel("latency (us)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)


def plot_gnuplot(series, out, title):
    with tempfile.TemporaryDirectory() as tmp:
        plots = []
        for i, (label, pts) in enumerate(series):
            data = os.path.join(tmp, f"s{i}.dat")
            with open(data, "w") as f:
                for p in pts:
                    f.write(f"{p['achieved']} {p['p50']} {p['p99']}\n")
            safe = label.replace('"', "'")
            plots.append(f'"{data}" using 1:2 with linespoints dashtype 2 lc {i + 1} '
                         f'title "{safe} p50"')
            plots.append(f'"{data}" using 1:3 with linespoints lc {i + 1} title "{safe} p99"')
        terminal = "pngcairo size 800,500" if out.endswith(".png") else "svg size 800,500"
        script = "\n".join([
            f"set terminal {terminal}", f'set output "{out}"', f'set title "{title}"',
            'set xlabel "achieved throughput (ops/s)"', 'set ylabel "latency (us)"',
            "set logscale y", "set grid", "set key top left",
            "plot " + ", ".join(plots), ""])
        subprocess.run(["gnuplot"], input=script, text=True, check=True)


def plot_svg(series, out, title):
    """A plain SVG: linear x, log y, one colour per series (p50 dashed, p99 solid)."""
    w, h, left, right, top, bottom = 800, 500, 80, 30, 40, 60
    pts = [p for _, s in series for p in s]
    if not pts:
        raise SystemExit("no points to plot")
    xmax = max(p["achieved"] for p in pts) * 1.05 or 1
    ymin = min(min(p["p50"], p["p99"]) for p in pts)
    ymax = max(max(p["p50"], p["p99"]) for p in pts)
    lo = math.floor(math.log10(max(ymin, 1e-3)))
    hi = math.ceil(math.log10(max(ymax, 1e-3)))
    if hi == lo:
        hi += 1

    def X(v):
        return left + (w - left - right) * v / xmax

    def Y(v):
        v = max(v, 10 ** lo)
        return top + (h - top - bottom) * (1 - (math.log10(v) - lo) / (hi - lo))

    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    e = []
    e.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'font-family="sans-serif" font-size="12">')
    e.append(f'<rect width="{w}" height="{h}" fill="white"/>')
    e.append(f'<text x="{w / 2}" y="22" text-anchor="middle" font-size="15">{esc(title)}</text>')
    for d in range(lo, hi + 1):  # horizontal grid: powers of ten
        y = Y(10 ** d)
        e.append(f'<line x1="{left}" y1="{y:.1f}" x2="{w - right}" y2="{y:.1f}" stroke="#ddd"/>')
        e.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt(10 ** d)}</text>')
    for i in range(6):  # vertical grid
        v = xmax * i / 5
        x = X(v)
        e.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{h - bottom}" stroke="#eee"/>')
        e.append(f'<text x="{x:.1f}" y="{h - bottom + 16}" text-anchor="middle">{fmt(v)}</text>')
    e.append(f'<rect x="{left}" y="{top}" width="{w - left - right}" height="{h - top - bottom}" '
             f'fill="none" stroke="black"/>')
    e.append(f'<text x="{(left + w - right) / 2}" y="{h - 20}" text-anchor="middle">'
             f'achieved throughput (ops/s)</text>')
    e.append(f'<text x="18" y="{(top + h - bottom) / 2}" text-anchor="middle" '
             f'transform="rotate(-90 18 {(top + h - bottom) / 2})">latency (us, log)</text>')
    legend_y = top + 16
    for i, (label, s) in enumerate(series):
        c = colors[i % len(colors)]
        for key, dash in (("p50", ' stroke-dasharray="6 4"'), ("p99", "")):
            path = " ".join(f"{X(p['achieved']):.1f},{Y(p[key]):.1f}" for p in s)
            e.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
            for p in s:
                e.append(f'<circle cx="{X(p["achieved"]):.1f}" cy="{Y(p[key]):.1f}" r="3" '
                         f'fill="{c}"><title>rate {p["rate"]:.0f}: {key} {p[key]:.1f} us'
                         f'</title></circle>')
            lx = left + 12
            e.append(f'<line x1="{lx}" y1="{legend_y - 4}" x2="{lx + 24}" y2="{legend_y - 4}" '
                     f'stroke="{c}" stroke-width="2"{dash}/>')
            e.append(f'<text x="{lx + 30}" y="{legend_y}">{esc(label)} {key}</text>')
            legend_y += 16
    e.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(e) + "\n")


def esc(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def fmt(v):
    if v >= 1e6:
        return f"{v / 1e6:g}M"
    if v >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json", nargs="+", help="tensord-load --json output of a --sweep")
    ap.add_argument("-o", "--output", default="sweep.svg", help="the plot (.svg or .png)")
    ap.add_argument("--workload", help="plot this workload instead of the total")
    ap.add_argument("--label", action="append", help="a series' label (once per file)")
    ap.add_argument("--title", default="tensord: latency vs throughput")
    ap.add_argument("--backend", choices=["auto", "matplotlib", "gnuplot", "svg"], default="auto")
    args = ap.parse_args()

    labels = args.label or []
    series = [load_series(path, args.workload, labels[i] if i < len(labels) else None)
              for i, path in enumerate(args.json)]
    for label, pts in series:
        print(f"{label}:")
        print(f"  {'rate':>10} {'achieved':>10} {'p50 us':>10} {'p99 us':>10} {'errors':>7}")
        for p in pts:
            print(f"  {p['rate']:10.0f} {p['achieved']:10.0f} {p['p50']:10.1f} {p['p99']:10.1f} "
                  f"{p['errors']:7d}")
        k = knee(pts)
        print(f"  knee: {'rate %.0f (p99 %.1f us)' % (k['rate'], k['p99']) if k else 'not reached'}")

    backend = args.backend
    if backend == "auto":
        try:
            import matplotlib  # noqa: F401
            backend = "matplotlib"
        except ImportError:
            backend = "gnuplot" if shutil.which("gnuplot") else "svg"
    if backend == "svg" and not args.output.endswith(".svg"):
        sys.exit("without matplotlib or gnuplot only .svg can be written")
    {"matplotlib": plot_matplotlib, "gnuplot": plot_gnuplot, "svg": plot_svg}[backend](
        series, args.output, args.title)
    print(f"wrote {args.output} ({backend})")


if __name__ == "__main__":
    main()
