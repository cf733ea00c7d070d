"""Run the atheris harnesses of fuzz/ against the ASan+UBSan+libFuzzer build (``make fuzz``).

    python fuzz/run.py --seconds N [--jobs J] [--only blosc,zstd] [--work build/fuzz/work]
    python fuzz/run.py --reproduce blosc path/to/crash-file ...

Every harness runs N seconds (``-max_total_time``) on its corpus (work/corpus/<harness>, kept
between runs, new inputs land there) plus the generated seeds (work/seeds/<harness>, made by
make_corpus.py when missing).  Prints one row per harness: executions, exec/s, coverage (libFuzzer's
``cov``: edges of the instrumented C code plus atheris's Python branches; ``ft``: features), corpus
size, and the outcome.  Exit status 1 when any harness found something: its log is in
work/logs/<harness>.log and the input in work/artifacts/ (see fuzz/README.md).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
HARNESSES = sorted(f[len("fuzz_"):-3] for f in os.listdir(HERE) if f.startswith("fuzz_") and f.endswith(".py"))


def environment(site: str, preload: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([site, HERE])
    env["LD_PRELOAD"] = preload
    # Python itself is not instrumented and leaks by design at exit: no leak checking.
    env["ASAN_OPTIONS"] = "detect_leaks=0:halt_on_error=1:abort_on_error=0:symbolize=1:" + env.get("ASAN_OPTIONS", "")
    env["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1:" + env.get("UBSAN_OPTIONS", "")
    env.setdefault("ZARRBOLT_NUM_THREADS", "1")
    return env


def command(name: str, seconds: int, work: str) -> list[str]:
    corpus, seeds = os.path.join(work, "corpus", name), os.path.join(work, "seeds", name)
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(os.path.join(work, "artifacts"), exist_ok=True)
    cmd = [sys.executable, os.path.join(HERE, f"fuzz_{name}.py"), corpus, seeds,
           f"-max_total_time={seconds}", "-print_final_stats=1", "-timeout=30", "-rss_limit_mb=2560",
           f"-artifact_prefix={os.path.join(work, 'artifacts', name)}-"]
    d = os.path.join(work, "seeds", f"{name}.dict")
    if os.path.exists(d):
        cmd.append(f"-dict={d}")
    return cmd


STAT = re.compile(r"^stat::(\w+):\s+(\d+)", re.M)
PROGRESS = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/(\S+)", re.M)


def summarize(name: str, log: str, rc: int, seconds: float) -> dict[str, object]:
    with open(log, errors="replace") as f:
        text = f.read()
    stats = dict(STAT.findall(text))
    prog = PROGRESS.findall(text)
    execs = int(stats.get("number_of_executed_units", prog[-1][0] if prog else 0))
    cov, ft, corp, size = (prog[-1][1:] if prog else ("?", "?", "?", "?"))
    found = re.search(r"(ERROR: AddressSanitizer[^\n]*|runtime error:[^\n]*|=== Uncaught Python exception: ===|"
                      r"ERROR: libFuzzer: [^\n]*|==\d+== ERROR: [^\n]*)", text)
    outcome = "ok" if rc == 0 and not found else f"FOUND ({found.group(0) if found else f'rc={rc}'})"
    return {"harness": name, "seconds": round(seconds), "execs": execs, "exec/s": round(execs / max(seconds, 1)),
            "cov": cov, "ft": ft, "corpus": f"{corp} ({size})", "outcome": outcome}


def run_all(names: list[str], seconds: int, jobs: int, work: str, env: dict[str, str]) -> list[dict[str, object]]:
    logs = os.path.join(work, "logs")
    os.makedirs(logs, exist_ok=True)
    pending, running, rows = list(names), {}, []
    while pending or running:
        while pending and len(running) < jobs:
            name = pending.pop(0)
            log = os.path.join(logs, f"{name}.log")
            f = open(log, "w")
            p = subprocess.Popen(command(name, seconds, work), stdout=f, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
            running[name] = (p, f, log, time.monotonic())
        time.sleep(0.5)
        for name, (p, f, log, t0) in list(running.items()):
            if p.poll() is not None:
                f.close()
                del running[name]
                row = summarize(name, log, p.returncode, time.monotonic() - t0)
                rows.append(row)
                print(f"{name}: {row['execs']} execs, cov {row['cov']}, {row['outcome']}", flush=True)
    return sorted(rows, key=lambda r: names.index(str(r["harness"])))


def table(rows: list[dict[str, object]]) -> str:
    cols = list(rows[0])
    widths = [max(len(c), *(len(str(r[c])) for r in rows)) for c in cols]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths))]
    lines += ["  ".join(str(r[c]).ljust(w) for c, w in zip(cols, widths)) for r in rows]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated harness names (default: all)")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "fuzz", "work"))
    ap.add_argument("--site", default=os.path.join(ROOT, "build", "fuzz", "site"))
    ap.add_argument("--preload", default=os.path.join(ROOT, "build", "fuzz", "rt", "asan_with_fuzzer.so"))
    ap.add_argument("--reproduce", nargs="+", metavar=("HARNESS", "INPUT"),
                    help="run HARNESS once on each INPUT file (a crash file from work/artifacts)")
    args = ap.parse_args()
    env = environment(os.path.abspath(args.site), os.path.abspath(args.preload))
    if args.reproduce:
        name, inputs = args.reproduce[0], args.reproduce[1:]
        return subprocess.call([sys.executable, os.path.join(HERE, f"fuzz_{name}.py"), *inputs], env=env)
    seeds = os.path.join(args.work, "seeds")
    if not os.path.isdir(seeds):
        subprocess.check_call([sys.executable, os.path.join(HERE, "make_corpus.py"), seeds], env=env)
    names = [n for n in args.only.split(",") if n] or HARNESSES
    unknown = set(names) - set(HARNESSES)
    if unknown:
        ap.error(f"unknown harnesses {sorted(unknown)}; known: {HARNESSES}")
    t0 = time.monotonic()
    rows = run_all(names, args.seconds, args.jobs, os.path.abspath(args.work), env)
    print(table(rows))
    print(f"fuzz: {len(rows)} harnesses, {sum(int(r['seconds']) for r in rows)} harness-seconds, "
          f"{sum(int(r['execs']) for r in rows)} executions, wall {round(time.monotonic() - t0)} s")
    return 0 if all(r["outcome"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
