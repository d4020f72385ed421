"""Every benchmark script starts (its imports resolve from a fresh process, outside the repository)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.name)
def test_benchmark_help(script, tmp_path):
    out = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "usage" in out.stdout.lower()


def test_neural_speed_compares_the_encoders_in_one_run(tmp_path):
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "neural_speed.py"
    out = subprocess.run([sys.executable, str(script), "--limit", "2", "--configs", "neural",
                          "--numpy-encoder", "neural", "--int8-encoder", "neural"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    machine, *rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert set(machine) == {"machine", "instructions"}  # the machine comes first
    assert [r["config"] for r in rows] == ["mcdonald-dependency-lm", "neural", "neural [numpy encoder]",
                                           "neural [onnx-int8 encoder]"]
    assert rows[0]["ratio_to_old_default"] == 1.0
    assert all(r["ratio_to_float32"] > 0 for r in rows[2:])
    assert all(r["sentences"] == 2 and r["median_ms"] > 0 and r["certified"] == 1.0 for r in rows)




def test_neural_speed_times_a_configuration_as_it_is_before_its_other_encoders(tmp_path):
    """A configuration given only to --numpy-encoder is timed as it is too (its ratio's denominator)."""
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "neural_speed.py"
    out = subprocess.run([sys.executable, str(script), "--limit", "2", "--configs", "mcdonald",
                          "--numpy-encoder", "neural", "--int8-encoder"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    _, *rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["config"] for r in rows] == ["mcdonald-dependency-lm", "mcdonald", "neural",
                                           "neural [numpy encoder]"]
    assert rows[-1]["ratio_to_float32"] > 0

def test_load_cost_measures_each_configuration_in_a_fresh_process(tmp_path):
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "load_cost.py"
    out = subprocess.run([sys.executable, str(script), "--limit", "2", "--configs", "mcdonald", "neural"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["config"] for r in rows] == ["mcdonald", "neural"] and all(r["sentences"] == 2 for r in rows)
    assert all(0 < r["rss_before_mb"] <= r["peak_mb"] and r["rss_after_mb"] <= r["peak_mb"] for r in rows)
    assert rows[1]["peak_mb"] > rows[0]["peak_mb"]  # the MiniLM encoder is loaded on top of the same start
    bad = subprocess.run([sys.executable, str(script), "--limit", "2", "--configs", "no-such-config"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert bad.returncode != 0 and "no-such-config failed" in bad.stderr


def test_weight_grid_scores_each_point_and_leaves_out_unweighted_components(tmp_path):
    """Two grid points on ten sentences per dev file: one table row each, all certified, and the LM that
    only the second point weights (and so the only one built) changes its scores."""
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "weight_grid.py"
    out = subprocess.run([sys.executable, str(script), "--limit", "10", "--grid",
                          '[{"bigram": 1}, {"bigram": 1, "lm": 0.5}]'], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = [line.strip("|").split("|") for line in out.stdout.splitlines()[2:]]
    assert len(rows) == 2 and [float(r[0]) for r in rows] == [1.0, 1.0] and float(rows[1][2]) == 0.5
    assert all(0 < float(r[-2]) <= 100 and float(r[-1]) == 100 for r in rows)  # mean F1, certified %
    assert rows[0][7:-1] != rows[1][7:-1]

def complete_sentences(tmp_path: Path) -> Path:
    """The two complete sentences of the word-ordering fixture, as a CoNLL-U file."""
    root = Path(__file__).resolve().parents[1]
    text = (root / "tests" / "fixtures" / "ordering" / "tiny.conllu").read_text(encoding="utf-8")
    dev = tmp_path / "dev.conllu"
    dev.write_text(text[:text.index("# sent_id = t3")], encoding="utf-8")
    return dev


def word_order_command(tmp_path: Path) -> list[str]:
    """``benchmarks/word_order.py`` with the shipped model on the two complete sentences of the fixture."""
    root = Path(__file__).resolve().parents[1]
    return [sys.executable, str(root / "benchmarks" / "word_order.py"), "--model",
            str(root / "data" / "word_order_model"), "--dev", str(complete_sentences(tmp_path))]


def test_word_order_join_scores_a_split_run_as_one(tmp_path):
    """Two halves written with --outputs and joined give the unsplit run's corpus BLEU and exact match,
    for best-first search alone (``conditions``) and for the default decoder (``tree-beam``)."""
    base = [*word_order_command(tmp_path), "--what", "conditions", "tree-beam", "--conditions", "words",
            "all", "--max-expansions", "50"]

    def run(*extra):
        out = subprocess.run(base + list(extra), cwd=tmp_path, capture_output=True, text=True, timeout=300,
                             check=False)
        assert out.returncode == 0, out.stderr[-2000:]
        return [json.loads(line) for line in out.stdout.splitlines()]

    whole = run("--sentences", "2", "--outputs", str(tmp_path / "whole.jsonl"))
    run("--sentences", "1", "--outputs", str(tmp_path / "a.jsonl"))
    run("--start", "1", "--seed", "1", "--sentences", "1", "--outputs", str(tmp_path / "b.jsonl"))
    joined = run("--join", str(tmp_path / "b.jsonl"), str(tmp_path / "a.jsonl"))
    assert [(r["condition"], r["tree_beam"], r["sentences"], r["joined"]) for r in joined] == [
        ("words", None, 2, 2), ("all", None, 2, 2), ("words", 64, 2, 2), ("all", 64, 2, 2)]
    by_measure = {(r["condition"], r.get("tree_beam")): r for r in whole}
    for r in joined:
        for key in ("bleu", "exact", "recovered", "complete"):
            assert r[key] == by_measure[r["condition"], r["tree_beam"]][key], (r, key)
    again = subprocess.run(base + ["--join", str(tmp_path / "a.jsonl"), str(tmp_path / "whole.jsonl")],
                           cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode != 0 and "decoded twice" in again.stderr


def test_word_order_lineariser_exact_counts_every_certified_sentence_once(tmp_path):
    """--what lineariser-exact: each certified sentence's beam output is one of same / same score / lower."""
    base = [*word_order_command(tmp_path), "--sentences", "2", "--what", "lineariser-exact"]
    out = subprocess.run(base + ["--lineariser-states", "100000"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    (record,) = [json.loads(line) for line in out.stdout.splitlines()]
    assert record["measure"] == "linearizer_exact_vs_beam" and record["sentences"] == 2
    assert record["certified"] == 2  # two short sentences: the exact DP finishes
    parts = ("beam_same_order", "beam_same_score", "beam_lower", "beam_higher")
    assert sum(record[k] for k in parts) == record["certified"] and record["beam_higher"] == 0
    refused = subprocess.run(base, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert refused.returncode != 0 and "--lineariser-states" in refused.stderr


def test_word_order_features_compares_python_and_compiled_features_in_one_run(tmp_path):
    root = Path(__file__).resolve().parents[1]
    tiny = complete_sentences(tmp_path)
    out = subprocess.run([sys.executable, str(root / "benchmarks" / "word_order_features.py"), "--train",
                          str(tiny), "--dev", str(tiny), "--model", str(root / "data" / "word_order_model"),
                          "--train-sentences", "3", "--epochs", "2", "--dev-sentences", "2", "--pops", "50"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    training, loops, search = (json.loads(line) for line in out.stdout.splitlines())
    assert training["what"] == "training" and training["identical_weights"] is True
    assert loops["what"] == "training loops" and loops["identical_weights"] is True
    assert loops["compiled_s"] == training["compiled_s"]  # the one compiled run both compare with
    assert search["what"] == "best-first search" and search["identical_outputs"] is True
    assert training["python_s"] > 0 and training["compiled_s"] > 0 and search["peak_mb"] > 0


def test_word_order_lm_beam_measures_the_conditions_without_heads(tmp_path):
    """--what lm-beam: one line per beam and condition that gives no heads (dep50 is skipped), with the
    model's LMs; certified is a share."""
    base = [*word_order_command(tmp_path), "--sentences", "2", "--what", "lm-beam", "--conditions", "words",
            "bnp", "dep50", "--lm-beam", "1", "512"]
    out = subprocess.run(base, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    records = [json.loads(line) for line in out.stdout.splitlines()]
    assert [(r["lm_beam"], r["condition"]) for r in records] == [(1, "words"), (1, "bnp"), (512, "words"),
                                                                  (512, "bnp")]
    for r in records:
        assert r["sentences"] == 2 and r["recovered"] == 1.0 and 0.0 <= r["certified"] <= 1.0
        assert "lm_beam_cased.binary" in r["lm_beam_lm"]
    assert records[0]["certified"] <= records[2]["certified"]  # a wider beam prunes no more often


def test_dependency_kernels_match_their_earlier_version_bit_for_bit(tmp_path):
    """The dependency kernels' max and count rules, written once (W3.2 item 5), fill the same charts as
    the version that wrote them twice; the benchmark says so on every case and exits 1 otherwise."""
    root = Path(__file__).resolve().parents[1]
    script = root / "benchmarks" / "dependency_kernels.py"
    sys.path.insert(0, str(root / "benchmarks"))
    try:
        from dependency_kernels import BEFORE_ONE_DP
    finally:
        sys.path.remove(str(root / "benchmarks"))
    known = subprocess.run(["git", "cat-file", "-e", f"{BEFORE_ONE_DP}^{{commit}}"], cwd=root,
                           capture_output=True, check=False)
    if known.returncode != 0:
        pytest.skip("the baseline revision is not in this clone's history (a shallow clone)")
    out = subprocess.run([sys.executable, str(script), "--sizes", "6", "17", "--repeats", "1"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(rows) == 8 and all(r["identical"] for r in rows)
    assert {r["kernel"] for r in rows} == {"first_order_chart", "second_order_chart"}
    assert all(r["ratio"] > 0 and r["peak_rss_mb"] > 0 for r in rows)


def _load_script(name: str):
    """A benchmark script as a module (its functions, without running it)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_weight_grid_decodes_a_long_sentence_with_the_chain_scorer_when_no_token_scorer_is_weighted():
    """Beyond the fallback length one component decodes alone: the chain scorer when it is the only
    neural one weighted, McDonald when no neural one is (their potentials here disagree on every token)."""
    import numpy as np

    from dualdecomp.engine.decode import decode

    grid = _load_script("weight_grid")
    n = 3
    upper = np.triu(np.ones((n + 2, n + 2)), k=1)
    parts = {"bigram": np.where(upper > 0, 1.0, -np.inf),  # every bigram pays: keep all
             "chain": np.where(upper > 0, -1.0, -np.inf)}  # every bigram costs: keep none
    chain_only = grid.components(parts, {"bigram": 0.1, "chain": 2})
    mcdonald_only = grid.components(parts, {"bigram": 1})
    assert len(chain_only) == 1 and len(mcdonald_only) == 1
    assert decode(chain_only).keep.sum() == 0
    assert decode(mcdonald_only).keep.sum() == n
    both = grid.components(parts | {"short": True}, {"bigram": 0.1, "chain": 2})
    assert decode(both).keep.sum() == 0  # within the fallback length both are summed: 0.1 - 2 per bigram


def test_weight_grid_takes_a_negative_chain_unary_down_to_the_pair_head_alone(capsys):
    """chain_unary = -chain takes the chain scorer's keep log-odds out of its potentials exactly (what a
    configuration's unary_scale 0 does), so only its pair head decodes; below -chain is a usage error."""
    import numpy as np
    import pytest

    from dualdecomp.engine.decode import decode
    from dualdecomp.solvers.bigram import token_potentials

    grid = _load_script("weight_grid")
    n = 4
    upper = np.triu(np.ones((n + 2, n + 2)), k=1)
    pair = np.where(upper > 0, 0.5, -np.inf)  # every bigram pays a little: alone, keep all
    keep = np.full(n, -3.0)  # the keep head says drop every token
    parts = {"short": True, "bigram": np.where(upper > 0, 0.0, -np.inf),
             "chain": pair + token_potentials(keep), "chain_unary": token_potentials(keep)}
    with_keep = grid.components(parts, {"bigram": 1, "chain": 1})
    pair_only = grid.components(parts, {"bigram": 1, "chain": 1, "chain_unary": -1})
    assert decode(with_keep).keep.sum() == 0
    assert decode(pair_only).keep.sum() == n
    assert decode(pair_only).primal == pytest.approx(0.5 * (n + 1), abs=1e-9)
    assert grid.weighs({"chain_unary": -0.5}, "chain_unary") and not grid.weighs({"chain": -1}, "chain")
    with pytest.raises(SystemExit) as exc:
        grid.main(["--chain-model", "x", "--grid", '[{"bigram": 1, "chain": 0.5, "chain_unary": -1}]'])
    assert exc.value.code == 2 and "below minus the chain weight" in capsys.readouterr().err


def test_speed_in_turns_times_the_two_configurations_it_is_given(tmp_path):
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "dependency_default_speed.py"
    out = subprocess.run([sys.executable, str(script), "--limit", "2", "--rounds", "1", "--configs",
                          "mcdonald", "mcdonald-lm"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    machine, *rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert "cores" in machine["machine"] and isinstance(machine["instructions"], list)
    assert [r.get("config") for r in rows[:2]] == ["mcdonald", "mcdonald-lm"]
    assert all(r["sentences"] == 2 and r["certified"] == 1.0 for r in rows[:2])
    assert set(rows[2]) == {"ratio_wall", "ratio_cpu"}
    same = subprocess.run([sys.executable, str(script), "--configs", "mcdonald", "mcdonald"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, check=False)
    assert same.returncode != 0 and "two different" in same.stderr


def test_weight_grid_weighs_the_chain_keep_head_and_scores_free_length(tmp_path):
    """chain_unary adds the chain scorer's keep log-odds once more (it moves the scores); --free adds the
    free-length token F1 columns; chain_unary without --chain-model is a usage error."""
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "weight_grid.py"
    chain = str(Path(__file__).resolve().parents[1] / "data" / "default_model" / "neural_chain")
    out = subprocess.run([sys.executable, str(script), "--limit", "6", "--free", "--chain-model", chain,
                          "--grid", '[{"bigram": 0.1, "chain": 1}, {"bigram": 0.1, "chain": 1, '
                          '"chain_unary": 4}]'], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header[-5:] == ["broadcast.dev free", "written.dev free", "eval.dev free", "mean free",
                           "certified %"]
    rows = [[float(c) for c in line.strip("|").split("|")] for line in lines[2:]]
    assert len(rows) == 2 and rows[1][header.index("chain_unary")] == 4
    assert all(0 < x <= 100 for r in rows for x in r[header.index("broadcast.dev"):-1])
    assert rows[0][-5:-1] != rows[1][-5:-1]
    bad = subprocess.run([sys.executable, str(script), "--grid", '[{"bigram": 1, "chain_unary": 1}]'],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert bad.returncode == 2 and "need --chain-model" in bad.stderr


def test_candidate_folder_adds_a_scorer_and_a_configuration_without_touching_the_default(tmp_path):
    """The copy decodes with the added configuration (the chain scorer's keep head scaled: other output
    scores than at scale 1), and the shipped folder still verifies; a bad configuration, an existing
    folder and a name already taken are clear errors (exit code 2)."""
    from dualdecomp.app.compressor import Compressor
    from dualdecomp.core.model_files import verify_directory
    from dualdecomp.data.locations import default_model_dir
    from dualdecomp.data.parsing import parse_tokens

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "candidate_folder.py"
    chain = str(default_model_dir() / "neural_chain")

    def config(scale: float) -> str:
        return json.dumps({"components": [{"kind": "bigram", "path": ".", "weight": 0.1},
                                          {"kind": "neural", "path": "chain2", "weight": 1,
                                           "options": {"unary_scale": scale}}]})

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(script), *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=600, check=False)

    out = run("--out", "m", "--add", f"chain2={chain}", "--config", f"one={config(1)}", "--config",
              f"two={config(2)}")
    assert out.returncode == 0, out.stderr[-2000:]
    verify_directory(tmp_path / "m")
    verify_directory(default_model_dir())
    assert not (default_model_dir() / "chain2").exists()
    assert not (default_model_dir() / "configs" / "two.json").exists()
    sentence = parse_tokens([["The", "council", "said", "on", "Monday", "that", "it", "would", "hold",
                              "the", "election", "in", "May", "."]])[0]
    one, two = (Compressor(tmp_path / "m", name).compress(sentence) for name in ("one", "two"))
    assert one.result.certified and two.result.certified
    assert abs(one.result.primal - two.result.primal) > 1e-6
    taken = run("--out", "m2", "--add", f"neural={chain}")
    assert taken.returncode == 2 and "exists: add the scorer under another name" in taken.stderr
    again = run("--out", "m", "--config", f"three={config(1)}")
    assert again.returncode == 2 and "exists: choose a new folder" in again.stderr
    bad = run("--out", "m3", "--config", 'x={"components": [{"kind": "nope", "path": ".", "weight": 1}]}')
    assert bad.returncode == 2 and "configuration x" in bad.stderr and not (tmp_path / "m3").exists()


def test_machine_reads_the_cpu_and_its_matrix_instructions(tmp_path):
    """The CPU's model name and, of its flags, those in MATRIX_FLAGS in that order; unknown without
    /proc/cpuinfo."""
    machine = _load_script("machine")
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Test CPU 9000\nflags\t\t: fpu amx_int8 avx2 sse "
                    "avx512_vnni\n\nprocessor\t: 1\nmodel name\t: Other\nflags\t\t: avx512f\n")
    found = machine.this_machine(info)
    assert found.cpu == "Test CPU 9000" and found.instructions == ("avx2", "avx512_vnni", "amx_int8")
    assert found.summary().endswith(f"Test CPU 9000, {found.cores} cores, {found.memory_gib:.0f} GiB")
    assert found.as_json() == {"machine": found.summary(),
                               "instructions": ["avx2", "avx512_vnni", "amx_int8"]}
    missing = machine.this_machine(tmp_path / "absent")
    assert missing.cpu == "unknown CPU" and missing.instructions == ()
