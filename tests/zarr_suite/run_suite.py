"""Run zarr-python's own test suite against zarrbolt's codec pipeline (``make zarr-suite``).

Runs under the reference virtualenv (zarr-python pinned, zarrbolt installed there):

1. fetches zarr-python's sdist (its tests are not in the wheel) once into a cache directory
   (``--cache``, default ``~/.cache/zarrbolt/zarr-suite``); later runs reuse it without network;
2. ``behaviour``: zarr's ``tests/test_codec_pipeline_suite.py`` for zarrbolt's pipeline, over both of
   its store kinds (``pipeline_suite_case.py`` is copied beside it): every test must pass;
3. ``compare``: ``SUBSET`` once per pipeline (zarr's default, ``FusedCodecPipeline``, zarrbolt's, set
   through ``ZARR_CODEC_PIPELINE__PATH``); fails when a test fails with zarrbolt's pipeline that passes
   with both others, and prints a per-pipeline table.  ``--bounded`` reuses the two reference runs'
   outcomes cached per zarr version and environment, so a run costs one pass of the subset.

``--pipeline`` replaces zarrbolt's pipeline by another one (the harness checks itself that way).
Exit status: 0 all good (or skipped, with the reason printed), 1 a failure.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ZARR_VERSION = "3.4.2"
ZARRBOLT_PIPELINE = "zarrbolt.codec_pipeline.ZarrboltCodecPipeline"
SUBSET = ["tests/test_array.py", "tests/test_indexing.py", "tests/test_codecs", "tests/test_group.py"]
REFERENCES = {
    "default": None,  # zarr's configured default (BatchedCodecPipeline)
    "fused": "zarr.core.codec_pipeline.FusedCodecPipeline",
}
# Tests of zarr-python's own implementation rather than of pipeline behaviour, so no other pipeline
# can pass them; reported, never counted as regressions.  Each entry: test id prefix -> why.
NOT_APPLICABLE = {
    "tests/test_codecs/test_sharding.py::test_sharding_partial_shard_read__index_chunk_slice_fails":
        "monkeypatches zarr.codecs.sharding._ShardIndex.get_chunk_slice (zarr-python's internal shard "
        "index class); a pipeline that decodes shards itself never calls it",
}
CASE_NAME = "tests/test_zarrbolt_pipeline_suite.py"
BAD = ("failed", "error")
# zarr's slowest test takes seconds; a pipeline that hangs (e.g. a child process that cannot find
# it and leaves a multiprocessing pool waiting forever) costs this much per test, not the whole run.
PER_TEST_TIMEOUT = 60



FOREIGN_PLUGINS = ("napari", "napari-plugin-engine", "npe2")

def log(msg: str) -> None:
    print(f"[zarr-suite] {msg}", flush=True)


# ---------------------------------------------------------------- sdist cache


def fetch_sdist(cache: Path, version: str) -> Path:
    """The unpacked sdist ``cache/zarr-<version>``, downloading the archive only when absent."""
    root = cache / f"zarr-{version}"
    if (root / "tests" / "test_codec_pipeline_suite.py").exists():
        return root
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"zarr-{version}.tar.gz"
    if not archive.exists():
        log(f"downloading zarr-python {version} sdist into {cache}")
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:",
                            "--no-deps", f"zarr=={version}", "-d", tmp],
                           check=True)
            got = list(Path(tmp).glob("zarr-*.tar.gz"))
            if len(got) != 1:
                raise RuntimeError(f"pip download gave {got}, expected one zarr-*.tar.gz")
            os.replace(got[0], archive)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        with tarfile.open(archive) as tf:
            tf.extractall(tmp, filter="data")
        try:
            os.replace(Path(tmp) / f"zarr-{version}", root)
        except OSError:  # another run unpacked it meanwhile
            if not root.exists():
                raise
    return root


def environment_key(version: str) -> str:
    """Identifies what a cached reference outcome depends on besides zarrbolt."""
    names = ["zarr", "numpy", "numcodecs", "hypothesis", "pytest", "fsspec", "crc32c"]
    parts = [version, sys.version.split()[0], *SUBSET]
    for name in names:
        try:
            parts.append(f"{name}={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{name}=-")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


# ---------------------------------------------------------------- pytest runs


def run_pytest(root: Path, paths: list[str], pipeline: str | None, out_json: Path,
               workers: int, env_extra: dict[str, str] | None = None,
               label: str | None = None) -> tuple[dict[str, str], float]:
    """Run zarr's tests at ``paths`` with ``pipeline``; returns outcomes per node id and seconds."""
    env = dict(os.environ)
    env.pop("ZARR_CODEC_PIPELINE__PATH", None)
    if pipeline:
        env["ZARR_CODEC_PIPELINE__PATH"] = pipeline
        if pipeline == ZARRBOLT_PIPELINE:
            env["ZB_PRELOAD"] = pipeline.rsplit(".", 1)[0]
    env["ZB_OUTCOMES_JSON"] = str(out_json)
    env["HYPOTHESIS_PROFILE"] = "ci"  # zarr's derandomized profile: the same examples every run
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    env.update(env_extra or {})
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "zb_outcomes"]
    # pytest plugins of other packages in the reference venv (napari's) that zarr's suite does not
    # use: importing them trips its warnings-are-errors setting
    cmd += [a for name in FOREIGN_PLUGINS for a in ("-p", f"no:{name}")]
    if importlib.util.find_spec("pytest_timeout"):
        cmd += ["--timeout", str(PER_TEST_TIMEOUT)]
    if workers > 1 and importlib.util.find_spec("xdist"):
        cmd += ["-n", str(workers)]
    out_json.unlink(missing_ok=True)
    for old in out_json.parent.glob(out_json.name + ".counters-*"):
        old.unlink()
    t0 = time.monotonic()
    proc = subprocess.run(cmd + paths, cwd=root, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - t0
    log_file = out_json.with_suffix(".log")
    log_file.write_text(proc.stdout + proc.stderr)
    if not out_json.exists():
        sys.stdout.write(proc.stdout[-6000:] + proc.stderr[-6000:])
        raise RuntimeError(f"pytest wrote no outcomes (exit {proc.returncode}): {' '.join(cmd)}")
    tail = proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else []
    log(f"  {label or pipeline or 'default'}: {tail[0] if tail else ''} ({seconds:.0f} s; output in {log_file})")
    report_counters(out_json)
    return json.loads(out_json.read_text()), seconds


def report_counters(out_json: Path) -> None:
    """Sum and print the pipeline counters the pytest processes left (``zb_outcomes``)."""
    total: dict[str, Counter] = {}
    for f in out_json.parent.glob(out_json.name + ".counters-*"):
        for name, counts_ in json.loads(f.read_text()).items():
            total.setdefault(name, Counter()).update(counts_)
    for name, c in sorted(total.items()):
        top = ", ".join(f"{k}: {v}" for k, v in c.most_common(8)) or "none"
        log(f"    {name}: {top}")


def counts(outcomes: dict[str, str]) -> dict[str, int]:
    c = {k: 0 for k in ("passed", "failed", "error", "skipped", "xfailed", "xpassed")}
    for v in outcomes.values():
        c[v] = c.get(v, 0) + 1
    return c


# ---------------------------------------------------------------- parts


def behaviour(root: Path, pipeline: str, work: Path) -> tuple[bool, str]:
    """zarr's CodecPipelineTests for ``pipeline`` on both store kinds; all must pass.  (Whether
    they did, and why, in a few words for the result line.)"""
    tmp = root / f"{CASE_NAME}.{os.getpid()}.tmp"
    shutil.copyfile(HERE / "pipeline_suite_case.py", tmp)
    os.replace(tmp, root / CASE_NAME)
    log(f"behaviour suite (tests/test_codec_pipeline_suite.py::CodecPipelineTests) for {pipeline}")
    out, _ = run_pytest(root, [CASE_NAME], None, work / "behaviour.json", 1,
                        {"ZARRBOLT_SUITE_PIPELINE": pipeline}, label=pipeline)
    c = counts(out)
    bad = sorted(k for k, v in out.items() if v not in ("passed",))
    kinds = {k.split("[", 1)[1].rstrip("]").split("-", 1)[0] for k in out if "[" in k}
    log(f"  {c['passed']} passed, {len(bad)} not passed; store kinds seen: {sorted(kinds)}")
    for k in bad[:50]:
        log(f"  NOT PASSED {out[k]:8s} {k}")
    ok = c["passed"] > 0 and not bad and {"sync", "async"} <= kinds
    if ok:
        return True, f"behaviour suite: all {c['passed']} passed"
    missing = sorted({"sync", "async"} - kinds)
    return False, (f"behaviour suite: {len(bad)} not passed" if bad else "behaviour suite: no test passed"
                   if not c["passed"] else f"behaviour suite: store kinds {missing} not seen")


def reference_outcomes(root: Path, cache: Path, name: str, workers: int, work: Path,
                       bounded: bool) -> tuple[dict[str, str], float | None]:
    """The outcomes with a reference pipeline: cached (``bounded``) or fresh (then cached)."""
    version = root.name.removeprefix("zarr-")
    key = environment_key(version)
    stored = cache / "baselines" / f"zarr-{version}-{name}-{key}.json"
    if bounded and stored.exists():
        log(f"  {name}: cached outcomes {stored.name}")
        return json.loads(stored.read_text()), None
    out, seconds = run_pytest(root, SUBSET, REFERENCES[name], work / f"{name}.json", workers)
    stored.parent.mkdir(parents=True, exist_ok=True)
    tmp = stored.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, indent=0, sort_keys=True))
    os.replace(tmp, stored)
    return out, seconds


def compare(root: Path, cache: Path, pipeline: str, workers: int, work: Path,
            bounded: bool) -> tuple[bool, str]:
    """zarr's array/indexing/codec/group tests with the three pipelines; see the module doc.
    (Whether none fails only with the pipeline under test, and the counts that say why, in a few
    words for the result line.)"""
    log(f"comparison on {' '.join(SUBSET)}")
    runs = {name: reference_outcomes(root, cache, name, workers, work, bounded)[0]
            for name in REFERENCES}
    runs["under test"], _ = run_pytest(root, SUBSET, pipeline, work / "under_test.json", workers)
    print_table(runs, pipeline)
    ours = runs["under test"]
    both = [k for k, v in runs["default"].items() if v == "passed" and runs["fused"].get(k) == "passed"]
    failing = sorted(k for k in both if ours.get(k, "not run") in (*BAD, "not run"))
    exempt = [k for k in failing if _not_applicable(k)]
    regressions = [k for k in failing if not _not_applicable(k)]
    other = sorted(k for k in ours if ours[k] in BAD and k not in failing)
    for k in exempt:
        log(f"not applicable ({_not_applicable(k)}): {k}")
    skipped = sorted(k for k in both if ours.get(k) == "skipped")
    for title, ids in (("failing only with the pipeline under test", regressions),
                       ("failing with it and with a reference pipeline too", other),
                       ("skipped with it, passing with both references", skipped)):
        if ids:
            log(f"{len(ids)} test(s) {title}:")
            for k in ids[:200]:
                log(f"  {ours.get(k, 'not run'):8s} {k}")
    why = [f"{len(regressions)} test(s) fail only with the pipeline under test" if regressions else
           f"no test that passes with both of zarr-python's pipelines fails with it ({len(both)} such tests)"]
    if other:
        why.append(f"{len(other)} fail with it and with a zarr-python pipeline too")
    if exempt:
        why.append(f"{len(exempt)} not applicable")
    if skipped:
        why.append(f"{len(skipped)} skipped with it")
    return not regressions, "comparison: " + ", ".join(why)


def _not_applicable(test_id: str) -> str | None:
    return next((why for prefix, why in NOT_APPLICABLE.items() if test_id.startswith(prefix)), None)


def print_table(runs: dict[str, dict[str, str]], pipeline: str) -> None:
    cols = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
    names = {"default": "zarr default (Batched)", "fused": "FusedCodecPipeline",
             "under test": f"{pipeline.rsplit('.', 1)[-1]} (under test)"}
    print(f"| pipeline | {' | '.join(cols)} |")
    print("|---" * (len(cols) + 1) + "|")
    for name, out in runs.items():
        c = counts(out)
        print(f"| {names[name]} | {' | '.join(str(c[x]) for x in cols)} |")
    sys.stdout.flush()


# ---------------------------------------------------------------- main


def skip_reason(pipeline: str, version: str) -> str | None:
    """Why the suite cannot run in this interpreter (None: it can)."""
    try:
        have = importlib.metadata.version("zarr")
    except importlib.metadata.PackageNotFoundError:
        return "zarr-python is not installed in this interpreter"
    if have != version:
        return f"zarr-python {have} is installed; the suite is pinned to {version}"
    if pipeline == ZARRBOLT_PIPELINE:
        try:
            import zarrbolt.codec_pipeline  # noqa: F401
        except ModuleNotFoundError as e:
            if e.name not in ("zarrbolt", "zarrbolt.codec_pipeline"):
                raise
            return f"{e.name} is not importable here (no codec pipeline in this zarrbolt)"
    return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", type=Path, default=Path(os.environ.get(
        "ZARRBOLT_ZARR_SUITE_CACHE", Path.home() / ".cache" / "zarrbolt" / "zarr-suite")))
    p.add_argument("--zarr-version", default=ZARR_VERSION, help="the zarr-python release whose tests run")
    p.add_argument("--pipeline", default=ZARRBOLT_PIPELINE, help="dotted path of the pipeline under test")
    p.add_argument("--parts", default="behaviour,compare", help="behaviour, compare, or both")
    p.add_argument("--bounded", action="store_true",
                   help="reuse cached outcomes of the reference pipelines (computed once per environment)")
    p.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1), help="pytest-xdist workers")
    args = p.parse_args(argv)
    reason = skip_reason(args.pipeline, args.zarr_version)
    if reason:
        log(f"skipped: {reason}")
        return 0
    root = fetch_sdist(args.cache, args.zarr_version)
    parts = set(args.parts.split(","))
    ok, timings, reasons = True, {}, []
    # outcomes and pytest output of this run: kept when it fails, one directory per run (runs may
    # share the cache)
    work = Path(tempfile.mkdtemp(prefix="run-", dir=args.cache))
    runs: dict[str, Callable[[], tuple[bool, str]]] = {
            "behaviour": lambda: behaviour(root, args.pipeline, work),
            "compare": lambda: compare(root, args.cache, args.pipeline, args.workers, work, args.bounded)}
    for name, run in runs.items():
        if name in parts:
            t0 = time.monotonic()
            part_ok, why = run()
            ok = part_ok and ok
            reasons.append(why)
            timings[name] = time.monotonic() - t0
    if ok:
        shutil.rmtree(work, ignore_errors=True)
    else:
        log(f"outcomes and pytest output kept in {work}")
    log("timings: " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()))
    # the verdict and its reason on one line (the counts in the table above include tests that
    # fail with zarr-python's own pipelines too)
    log(f"result: {'OK' if ok else 'FAILED'}: " + "; ".join(reasons))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
