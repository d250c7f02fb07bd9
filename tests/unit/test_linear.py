"""The linear program over one loop pass (app/core/tcn/linear.py) and its independent checker
(app/core/tcn/check/linear.py): docs/verifier.md, "Linear program".

- the builder and the checker state the same rows (two implementations, compared row by row);
- the checker accepts every certificate the product writes and rejects mutated ones;
- soundness against the search: on small random topologies, some with failing bolts, wherever the LP
  says no lasso grows, the search without rate-derived constraints finds none, and every certified
  lasso the search finds satisfies every row with the sums of its own loop pass (the strong test that
  each row holds); the test counts that both were exercised;
- the verifier decides focused-crawler cfg-5 with failures and a StormCrawler crawler with failing
  fetcher and parse, which the search alone leaves undecided.
"""

from __future__ import annotations

import json
import random
import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.formats import load_topology
from app.core.formats.trace import Trace, expanded_trace
from app.core.rates import rate_check
from app.core.results import LinearCertificate
from app.core.tcn.certificates import certificate_file
from app.core.tcn.check.certify import certify
from app.core.tcn.check.content import content_hash
from app.core.tcn.check.files import check_file
from app.core.tcn.check.linear import check_certificate, label, pass_rows
from app.core.tcn.linear import build_rows, farkas, primal_feasible
from app.core.tcn.network import build_network
from app.core.tcn.search import SearchOptions, verify
from app.core.topology import Topology, parse_topology

ROOT = Path(__file__).resolve().parents[2]
DVERT = ROOT / "tests" / "data" / "dvert"
CFG5 = DVERT / "icfem-focused-crawler-reduced-cfg-5.json"


def with_failures(topo: Topology, on: bool = True) -> Topology:
    data = topo.model_dump(mode="json")
    data["settings"]["failures"] = on
    return parse_topology(data)


def certificate_for(topo: Topology, target: str) -> tuple[dict[str, Any], LinearCertificate] | None:
    """The cone document and the product's certificate for `target`, or None when the LP is feasible."""
    net = build_network(topo, [target])
    y = farkas(build_rows(net, target))
    if y is None:
        return None
    return net.document(), LinearCertificate(target=target, content_hash=content_hash(net.topology),
                                             rows={n: str(v) for n, v in y.items()})


def same_rows(topo: Topology, target: str) -> None:
    """The builder's rows on the target's cone are exactly the checker's rows of the cone's document."""
    net = build_network(topo, [target])
    mine = {r.name: (r.kind, {v: c for v, c in r.coefficients.items() if c}, r.constant)
            for r in build_rows(net, target)}
    theirs = {n: (kind, {v: c for v, c in cs.items() if c}, c0)
              for n, (kind, cs, c0) in pass_rows(net.topology, target).items()}
    assert mine == theirs


# ---- the published configurations ----------------------------------------------------------------


def test_cfg5_with_failures_has_a_certificate_the_checker_accepts() -> None:
    topo = with_failures(load_topology(CFG5))
    found = certificate_for(topo, "expander")
    assert found is not None
    document, cert = found
    assert check_certificate(document, cert) == []
    assert len(cert.model_dump_json()) < 1024  # small
    assert primal_feasible(build_rows(build_network(topo, ["expander"]), "expander")) is False


PUBLISHED = sorted((ROOT / "models").glob("*.storm.json")) + sorted(DVERT.glob("icfem-*-cfg-*.json"))


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda p: p.name)
def test_builder_and_checker_agree_and_every_certificate_is_accepted(path: Path) -> None:
    base = load_topology(path)
    variants = [base] + ([with_failures(base)] if any(b.min_ttf is not None for b in base.bolts) else [])
    for topo in variants:
        for bolt in topo.checked_bolts():
            same_rows(topo, bolt.name)
            found = certificate_for(topo, bolt.name)
            rows = build_rows(build_network(topo, [bolt.name]), bolt.name)
            assert primal_feasible(rows) is (found is None)  # Farkas: exactly one of the two
            if found is not None:
                assert check_certificate(*found) == []


# ---- the checker rejects what is not a proof ------------------------------------------------------


def _mutated(document: dict[str, Any], cert: LinearCertificate) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    c = cert.model_dump()
    rows = c["rows"]
    name = max(rows, key=lambda n: Fraction(rows[n]))  # a row that matters
    out = []
    changed = {**c, "rows": {**rows, name: str(Fraction(rows[name]) / 2)}}
    out.append(("multiplier changed", document, changed))
    out.append(("multiplier negative", document, {**c, "rows": {**rows, name: "-" + rows[name]}}))
    out.append(("row dropped", document, {**c, "rows": {n: v for n, v in rows.items() if n != name}}))
    renamed = {(n + "x" if n == name else n): v for n, v in rows.items()}
    out.append(("row renamed", document, {**c, "rows": renamed}))
    out.append(("not a fraction", document, {**c, "rows": {**rows, name: "half"}}))
    out.append(("other target", document, {**c, "target": "nobody"}))
    slower = json.loads(json.dumps(document))
    for b in slower["bolts"]:
        if b["name"] == cert.target:
            b["alpha"] = b["alpha"] * 3
    out.append(("document changed, stale hash", slower, c))
    rehashed = {**c, "content_hash": content_hash(parse_topology(slower))}
    out.append(("document changed, hash recomputed: the rows differ", slower, rehashed))
    return out


@pytest.mark.parametrize("source", ["cfg5-failures", "getting-started-split", "cfg6"])
def test_mutated_certificates_are_rejected(source: str) -> None:
    if source == "cfg5-failures":
        topo, target = with_failures(load_topology(CFG5)), "expander"
    elif source == "cfg6":
        topo, target = load_topology(ROOT / "models" / "focused-crawler-reduced-cfg-6.storm.json"), "expander"
    else:
        topo, target = load_topology(ROOT / "models" / "getting-started.storm.json"), "split"
    found = certificate_for(topo, target)
    assert found is not None
    document, cert = found
    assert check_certificate(document, cert.model_dump()) == []
    for what, doc, mutant in _mutated(document, cert):
        problems = check_certificate(doc, mutant)
        assert problems, what


def test_a_file_of_another_format_is_refused() -> None:
    with pytest.raises(ValueError, match="stormbound-certificates/1"):
        check_file({"format": "stormbound-trace/1"})


# ---- soundness against the search -----------------------------------------------------------------


def random_topology(rng: random.Random) -> Topology:
    """A spout, a chain or tree of 2-3 bolts, some of them failing; replays, emission rule and timing drawn."""
    n = rng.randint(2, 3)
    bolts, subs = [], [{"source": "S", "target": "B0"}]
    failing = rng.random() < 0.75
    for i in range(n):
        bolt = {"name": f"B{i}", "alpha": rng.choice([0.25, 0.5, 0.9, 1.05, 2]),
                "sigma": rng.choice([0, 0.5, 1, 1, 1.5, 2, 0.75]), "parallelism": rng.randint(1, 3)}
        if failing and rng.random() < 0.5:
            bolt["min_ttf"] = rng.choice([0.5, 1, 2, 3])
        bolts.append(bolt)
        if i:
            subs.append({"source": f"B{rng.randint(0, i - 1)}", "target": f"B{i}"})
    if failing:
        bolts.append({"name": "C", "alpha": 0.1, "sigma": 0, "parallelism": 1, "min_ttf": rng.choice([1, 2])})
        subs.append({"source": rng.choice(["S", "B0"]), "target": "C"})
    settings: dict[str, Any] = {"tolerance": rng.choice([0, 0.1]), "max_idle_time": rng.choice([0, 0.01]),
                                "emission": rng.choice(["dvert", "exact"])}
    if failing:
        settings.update(min_reboot_time=rng.choice([0.5, 1]), max_reboot_time=2,
                        replay=rng.choice(["paced", "paced", "at-once", "none"]), failures=True)
    return parse_topology({"spouts": [{"name": "S", "rate": rng.choice([1, 2, 4]), "burst": rng.randint(1, 2)}],
                           "bolts": bolts, "subscriptions": subs, "settings": settings,
                           "verification": {"checked": [b["name"] for b in bolts if b["name"] != "C"]}})


def pass_sums(trace: Trace) -> dict[str, Fraction]:
    """Every variable of the rows, summed over the trace's loop pass (positions loop_start..k)."""
    pos, lo, k = trace.positions, trace.loop_start, trace.k
    times = [Fraction(p.time) for p in pos]
    sums: dict[str, Fraction] = {"T": times[k + 1] - times[lo]}

    def add(var: str, value: Fraction | int) -> None:
        sums[var] = sums.get(var, Fraction(0)) + value

    for i in range(lo, k + 1):
        for s, sp in pos[i].spouts.items():
            default = sp.emitted_by_stream.get("default", 0) if sp.emitted_by_stream else sp.emitted
            add(f"M{label(s)}", int(sp.emit))
            add(f"N{label(s)}", default - sp.replayed)
            add(f"R{label(s)}", sp.replayed)
            for st, n in (sp.emitted_by_stream or {}).items():
                if st != "default":
                    add(f"E{label(s, st)}", n)
        for j, b in pos[i].bolts.items():
            add(f"K{label(j)}", int(b.take))
            add(f"P{label(j)}", b.batch if b.take else 0)
            add(f"A{label(j)}", b.arrivals)
            add(f"L{label(j)}", b.lost)
            add(f"F{label(j)}", int(b.fail))
            before = pos[i - 1].bolts[j]  # the state before i (before loop_start: the one before k + 1)
            add(f"Lb{label(j)}", before.batch if b.fail and before.phase == "processing" else 0)
            add(f"D{label(j)}", times[i + 1] - times[i] if b.phase == "failed" else 0)
            for st, n in (b.emitted_by_stream or {"default": b.emitted}).items():
                add(f"E{label(j, st)}", n)
            for s, r in (b.replays or {}).items():
                add(f"r{label(j, s)}", r)
                add(f"G{label(s)}", r)
    for s in pos[0].spouts:
        sums[f"dR{label(s)}"] = Fraction(pos[k + 1].spouts[s].backlog - pos[lo].spouts[s].backlog)
    for j in pos[0].bolts:
        sums[f"d{label(j)}"] = Fraction(pos[k + 1].bolts[j].queue - pos[lo].bolts[j].queue)
    return sums


def _components(var: str) -> list[str]:
    """The components a variable's name is about (a stream's: its component; a replay's: bolt and spout)."""
    if "[" not in var:
        return []
    inside = var[var.index("["):]
    names = json.loads(inside) if inside.startswith('["') else inside[1:-1].split("/")
    return names if var.startswith("r") else names[:1]


def broken_rows(rows: dict[str, tuple[str, dict[str, Fraction], Fraction]], sums: dict[str, Fraction],
                present: set[str], streams: set[str] | None = None) -> list[str]:
    """The rows (over components present in the trace, and streams that carry tuples in its network when
    `streams` names them: a stream nobody subscribes to there is silent) that the loop pass's sums break."""
    out = []
    for name, (kind, coefficients, constant) in rows.items():
        if any(c not in present for v in coefficients for c in _components(v)):
            continue
        if streams is not None and any(v.startswith("E[") and v not in streams for v in coefficients):
            continue
        value = sum((c * sums.get(v, Fraction(0)) for v, c in coefficients.items()), constant)
        if (kind == "ge" and value < 0) or (kind == "eq" and value != 0):
            out.append(f"{name} = {value}")
    return out


N_TOPOLOGIES = 12  # 10 proofs (8 with failing bolts) and 24 lassos (6 with failures) checked: 62 s of the suite


def test_the_linear_program_never_contradicts_the_search_and_every_lasso_obeys_every_row() -> None:
    rng = random.Random(20261127)
    proofs_checked = proofs_with_failures = lassos_checked = failing_lassos = 0
    for _ in range(N_TOPOLOGIES):
        topo = random_topology(rng)
        names = [b.name for b in topo.checked_bolts()]
        certified = {}
        for name in names:
            same_rows(topo, name)
            found = certificate_for(topo, name)
            if found is not None:
                assert check_certificate(*found) == []
                certified[name] = found
        free = verify(topo, SearchOptions(k_max=8, timeout_s=30, force_search=True))
        for name in certified:  # the LP says no lasso makes it grow: the unconstrained search agrees
            assert free.bolts[name].verdict != "counterexample", (name, topo.model_dump_json())
            proofs_checked += 1
            proofs_with_failures += build_network(topo, [name]).failures is not None
        for trace in map(expanded_trace, free.traces):  # a long simulated lasso comes compressed
            growth = certify(trace).growth_per_loop
            sums = pass_sums(trace)
            embedded = parse_topology(trace.topology)
            present = set(trace.positions[0].spouts) | set(trace.positions[0].bolts)
            for name, grew in growth.items():
                if grew <= 0 or name not in names:
                    continue
                assert name not in certified
                # the rows of the network the trace runs on, and those of the original cone it is a run of
                own = pass_rows(embedded, name)
                assert broken_rows(own, sums, present) == [], (name, trace.topology)
                original = {r.name: (r.kind, r.coefficients, r.constant)
                            for r in build_rows(build_network(topo, [name]), name)}
                carried = {v for _, coefficients, _ in own.values() for v in coefficients if v.startswith("E[")}
                assert broken_rows(original, sums, present, carried) == [], (name, topo.model_dump_json())
                lassos_checked += 1
                failing_lassos += any(b.fail for p in trace.positions for b in p.bolts.values())
    print(f"LP proofs checked against the search: {proofs_checked} ({proofs_with_failures} with failing bolts); "
          f"lassos whose pass sums obey every row: {lassos_checked} ({failing_lassos} with failures)")
    assert proofs_checked >= 5 and lassos_checked >= 5, (proofs_checked, lassos_checked)
    assert proofs_with_failures >= 1, proofs_with_failures
    assert failing_lassos >= 1, failing_lassos


# ---- the verifier --------------------------------------------------------------------------------


def test_verify_decides_cfg5_with_failures_and_writes_a_checkable_certificate(tmp_path: Path, capsys) -> None:
    out = tmp_path / "cfg5.cert.json"
    code = main(["verify", str(CFG5), "--failures", "on", "--json", "--certificate-out", str(out), "-q"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["verdict"] == "no-repeating-growth"
    bolt = data["bolts"]["expander"]
    assert bolt["method"] == "linear program" and bolt["certificate"]["target"] == "expander"
    assert "linear relations" in bolt["message"] and "--k-max" not in bolt["message"]
    written = json.loads(out.read_text())
    assert [problems for _, _, problems in check_file(written)] == [[]]
    assert main(["check-certificate", str(out)]) == 0
    assert "expander: accepted" in capsys.readouterr().out
    written["certificates"][0]["topology"]["bolts"][1]["alpha"] = 30
    out.write_text(json.dumps(written))
    assert main(["check-certificate", str(out)]) == 1
    assert "expander: rejected" in capsys.readouterr().out


def test_force_search_does_not_use_the_linear_program() -> None:
    topo = with_failures(load_topology(CFG5))
    result = verify(topo, SearchOptions(k_max=6, timeout_s=30, force_search=True, simulate=False))
    assert result.bolts["expander"].method != "linear program"
    assert result.bolts["expander"].certificate is None


@pytest.fixture()
def crawler(tmp_path: Path, capsys) -> Path:
    """StormCrawler's crawler.flux imported and annotated (README, "From your Storm project" and "Failures
    and replays"): fetcher and parse may fail (min_ttf 5 min, reboots of 10 s to 2 min, paced replays)."""
    folder = tmp_path / "stormcrawler"
    shutil.copytree(ROOT / "tests" / "data" / "flux" / "stormcrawler", folder)
    doc = tmp_path / "crawler.storm.json"
    assert main(["import", "flux", str(folder / "crawler.flux"), "-o", str(doc)]) == 0
    for argv in (["spout", "rate=10", "burst=1"], ["filespout", "rate=1", "burst=1", "ratio.status=1"],
                 ["__tick:status_metrics", "rate=0.1"], ["filter", "alpha=5ms", "sigma.status=1"],
                 ["partitioner", "alpha=2ms", "sigma=1"], ["fetcher", "alpha=60ms", "sigma=1", "sigma.status=1"],
                 ["sitemap", "alpha=10ms", "sigma=0.2", "sigma.status=0.1"],
                 ["parse", "alpha=40ms", "sigma=1", "sigma.status=2"], ["shunt", "alpha=2ms", "sigma=0.9",
                                                                        "sigma.tika=0.1"],
                 ["tika", "alpha=100ms", "sigma=1", "sigma.status=1"], ["index", "alpha=20ms", "sigma.status=1"],
                 ["status", "alpha=10ms", "sigma.deletion=0.01"], ["deleter", "alpha=10ms"],
                 ["status_metrics", "alpha=10ms"], ["settings", "min_reboot_time=10s", "max_reboot_time=2min"],
                 ["fetcher", "min_ttf=5min"], ["parse", "min_ttf=5min"],
                 ["fetcher", "threads=1"]):  # one fetch at a time (the import gives its 50 threads: model.md 8)
        assert main(["annotate", str(doc), *argv]) == 0, argv
    capsys.readouterr()
    return doc


def test_the_crawler_with_failing_fetcher_and_parse_is_decided(crawler: Path, capsys) -> None:
    topo = load_topology(crawler)
    assert rate_check(topo).bolts["fetcher"].status == "may-grow"  # the rate check alone: no proof
    result = verify(topo, SearchOptions(timeout_s=60))
    fetcher = result.bolts["fetcher"]
    assert fetcher.verdict == "no-repeating-growth" and fetcher.method == "linear program", fetcher.message
    assert result.verdict == "no-repeating-growth"
    file = certificate_file(topo, result.bolts)
    assert file is not None and all(not problems for _, _, problems in check_file(file))


def test_an_undecided_bolt_that_needs_a_whole_failure_cycle_is_not_told_to_try_twice_the_bound(
        crawler: Path, capsys) -> None:
    """fetcher at α = 80 ms: bounded without failures, and with parse failing every 5 min it does grow (the
    simulation builds a lasso of some 40,000 positions); the solver alone up to k = 8 cannot reach it."""
    assert main(["annotate", str(crawler), "fetcher", "alpha=80ms"]) == 0
    capsys.readouterr()
    result = verify(load_topology(crawler), SearchOptions(k_max=8, timeout_s=120, simulate=False))
    assert result.bolts["fetcher"].verdict == "none-up-to-k", result.message
    said = [n for n in result.notes if n.startswith("the rate check says fetcher")]
    assert said and "--k-max 16" not in said[0]
    assert "whole failure cycle of at least 310 s" in said[0] and "What would decide it" in said[0]
    assert "What would decide it" in result.bolts["fetcher"].message


def test_the_certificate_hash_is_the_verified_exports_content_hash() -> None:
    from app.core.formats.verified import content_hash

    for path in PUBLISHED[:4]:
        topo = load_topology(path)
        assert content_hash(topo) == content_hash(topo)


def test_the_panel_and_the_verified_export_name_the_linear_program() -> None:
    from app.core.formats.verified import bolt_verdict_words, verdict_words

    result = verify(with_failures(load_topology(CFG5)), SearchOptions(timeout_s=60))
    assert bolt_verdict_words(result.bolts["expander"]) == ("no repeating run grows (linear program, certified; "
                                                            "not proven bounded in every run)")
    assert verdict_words(result) == "no repeating run grows (linear program; not proven bounded in every run)"


def test_names_with_brackets_and_slashes_never_share_a_variable() -> None:
    """A bolt "x/y" and a bolt "x" with a stream "y/default" are different quantities: names are quoted."""
    topo = parse_topology({
        "spouts": [{"name": "S", "rate": 1, "burst": 1}],
        "bolts": [{"name": "x", "alpha": 0.1, "sigma": 1, "parallelism": 1, "streams": ["y/default"],
                   "stream_sigma": {"y/default": 1}},
                  {"name": "x/y", "alpha": 0.1, "sigma": 1, "parallelism": 1},
                  {"name": "z]", "alpha": 0.5, "sigma": 0, "parallelism": 1}],
        "subscriptions": [{"source": "S", "target": "x"}, {"source": "S", "target": "x/y"},
                          {"source": "x", "target": "z]", "stream": "y/default"},
                          {"source": "x/y", "target": "z]"}],
        "settings": {"tolerance": 0.1, "max_idle_time": 0}})
    same_rows(topo, "z]")
    rows = pass_rows(topo, "z]")
    arrivals = [name for name in rows if name.startswith("arrivals")]
    received = next(cs for n, (_, cs, _) in rows.items() if n == "arrivals" + label("z]"))
    assert len(arrivals) == 3 and len([v for v in received if v.startswith("E")]) == 2


def test_an_existing_certificate_file_is_an_output_not_an_input(tmp_path: Path, capsys) -> None:
    """--certificate-out names a file the command writes: an existing one asks for --force (and is then replaced);
    the command's own input is never replaced."""
    out = tmp_path / "old.cert.json"
    out.write_text("{}")
    assert main(["verify", str(CFG5), "--failures", "on", "--certificate-out", str(out), "-q"]) == 2
    assert "exists: give --force" in capsys.readouterr().err and out.read_text() == "{}"
    assert main(["verify", str(CFG5), "--failures", "on", "--certificate-out", str(out), "--force", "-q"]) == 0
    assert [problems for _, _, problems in check_file(json.loads(out.read_text()))] == [[]]
    before = CFG5.read_bytes()
    assert main(["verify", str(CFG5), "--failures", "on", "--certificate-out", str(CFG5), "--force", "-q"]) == 2
    assert "is also an input" in capsys.readouterr().err and CFG5.read_bytes() == before


def test_a_bolt_below_a_failing_bolt_whose_replays_only_make_up_for_its_losses_is_proven() -> None:
    """S (2/s) -> F (fails, paced replays) -> B (capacity 2.02): what F loses is replayed, so B receives the fresh
    2/s in the long run. The rows count the batch F loses at a failure once (Lb: taken, then lost, never
    emitted); when they counted it as emitted too, every failure gave B one tuple more and nothing was proven."""
    doc = {"schema_version": 1, "name": "replays", "spouts": [{"id": "s", "name": "S", "rate": 2, "burst": 1}],
           "bolts": [{"id": "f", "name": "F", "alpha": 0.2, "sigma": 1, "parallelism": 1, "min_ttf": 20},
                     {"id": "b", "name": "B", "alpha": 0.495, "sigma": 0, "parallelism": 1}],
           "subscriptions": [{"source": "s", "target": "f"}, {"source": "f", "target": "b"}],
           "settings": {"tolerance": 0, "max_idle_time": 0, "min_reboot_time": 5, "max_reboot_time": 10,
                        "failures": True}}
    topo = parse_topology(doc)
    net = build_network(topo, ["B"])
    multipliers = farkas(build_rows(net, "B"))
    assert multipliers is not None  # with the batch counted as emitted too, the rows had a solution
    cert = LinearCertificate(target="B", content_hash=content_hash(net.topology),
                             rows={n: str(y) for n, y in multipliers.items()})
    assert check_certificate(net.topology, cert) == []
    # verify answers more: the rate check's netting proves B bounded (docs/boundedness.md, "Failures", step 7)
    assert verify(topo, SearchOptions(timeout_s=60)).bolts["B"].verdict == "bounded"
