#!/usr/bin/env bash
# Hyper-parameter search for T3 (Cohn & Lapata 2009) on broadcast dev: recursion depth, SSVM loss, λ,
# epoch, SSVM vs. averaged perceptron.  Every (λ, epoch) dev bigram F1 at gold length (exact chart at each
# reference's length: the selection criterion of `t3 train`) is read from its per-epoch log lines; the selected model of each run is then scored by
# `dualdecomp t3 evaluate --lm none` (exact chart, free and gold length).
#
# Usage (from anywhere; paths are relative to the repo root):
#   benchmarks/t3_search.sh [OUT_DIR]          # default OUT_DIR: a fresh mktemp directory (kept)
# Environment:
#   BIN=.venv/bin          where `dualdecomp` and `python` live
#   TRAIN=, DEV=           corpora (default data/corpora/broadcast.{train,dev}.jsonl)
#   RUN_TIMEOUT=0          seconds allowed per training run (0: no limit); a run that times out is
#                          reported with the epochs it logged, and the grid goes on
#   RUNS="d0-token ..."    a subset of the grid (names below)
#   LAMS="1e-5 1e-4 1e-3"  the SSVM λ values (one `t3 train` per run tries them all)
#   RESUME=1               skip runs whose model and logs already exist in OUT_DIR
#   EXTRA_ARGS="--limit 50"  appended to every `t3 train` (smoke tests)
# Output: OUT_DIR/models/<run>/ (model), OUT_DIR/logs/<run>.{train.log,eval.jsonl,time}, and the markdown
# table on stdout (also written to OUT_DIR/table.md).  Progress goes to stderr.
# The machine is shared: run it as `nice -n 15 benchmarks/t3_search.sh ...`.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
DD="$BIN/dualdecomp"
PY="$BIN/python"
TRAIN=${TRAIN:-data/corpora/broadcast.train.jsonl}
DEV=${DEV:-data/corpora/broadcast.dev.jsonl}
RUN_TIMEOUT=${RUN_TIMEOUT:-0}
OUT=${1:-$(mktemp -d -t t3_search.XXXXXX)}
mkdir -p "$OUT/models" "$OUT/logs"
OUT=$(cd "$OUT" && pwd)
# shellcheck disable=SC2206
LAMS=(${LAMS:-1e-5 1e-4 1e-3})
COMMON=(--epochs 3 --lm none --hash-bits 18)

# name | depth | method | loss
GRID=(
    "d0-token|0|ssvm|token"
    "d1-token|1|ssvm|token"
    "d2-token|2|ssvm|token"
    "d1-cfg|1|ssvm|cfg"
    "d1-edit|1|ssvm|edit"
    "d1-perceptron|1|perceptron|token"
)
RUNS=${RUNS:-$(for g in "${GRID[@]}"; do printf '%s ' "${g%%|*}"; done)}

log() { echo "[t3_search $(date +%H:%M:%S)] $*" >&2; }
log "output directory: $OUT"

for g in "${GRID[@]}"; do
    IFS='|' read -r name depth method loss <<<"$g"
    case " $RUNS " in *" $name "*) ;; *) continue ;; esac
    model="$OUT/models/$name"
    tlog="$OUT/logs/$name.train.log"
    elog="$OUT/logs/$name.eval.jsonl"
    tfile="$OUT/logs/$name.time"
    if [ "${RESUME:-0}" = 1 ] && [ -f "$model/model.json" ] && [ -s "$elog" ] && [ -f "$tfile" ]; then
        log "$name: done already, skipped"
        continue
    fi
    lam_args=()
    [ "$method" = ssvm ] && lam_args=(--lam "${LAMS[@]}")
    # shellcheck disable=SC2206
    extra=(${EXTRA_ARGS:-})
    log "$name: t3 train --depth $depth --method $method --loss $loss ${lam_args[*]} ${COMMON[*]} ${extra[*]}"
    rm -rf "$model" "$elog"  # no stale model of an earlier search in OUT_DIR if this run fails
    start=$(date +%s)
    status=0
    timeout "$RUN_TIMEOUT" "$DD" t3 train --train "$TRAIN" --dev "$DEV" --out "$model" --depth "$depth" \
        --method "$method" --loss "$loss" "${lam_args[@]}" "${COMMON[@]}" "${extra[@]}" \
        2>&1 | tee "$tlog" >&2 || status=$?
    train_s=$(( $(date +%s) - start ))
    eval_s=0
    if [ "$status" = 0 ]; then
        start=$(date +%s)
        "$DD" t3 evaluate --model "$model" --dev "$DEV" --json --lm none >"$elog"
        eval_s=$(( $(date +%s) - start ))
    else
        log "$name: training exited with status $status after ${train_s}s (124 = RUN_TIMEOUT)"
    fi
    printf 'train_seconds=%s\neval_seconds=%s\ntrain_status=%s\n' "$train_s" "$eval_s" "$status" >"$tfile"
    log "$name: train ${train_s}s, evaluate ${eval_s}s"
done

# ---- the table: every (λ, epoch) of every run; gold-length numbers on the selected row of each run ----
"$PY" - "$OUT" "$DEV" "${GRID[@]}" <<'EOF' | tee "$OUT/table.md"
import json, re, sys
from pathlib import Path

out = Path(sys.argv[1])
EPOCH = re.compile(r"^\s+(ssvm|perceptron) lam=(\S+) epoch (\d+): dev bigram F1 at gold length ([0-9.]+) "
                   r"\((\d+)s\)")
GRAMMAR = re.compile(r"^grammar: (\d+) rules")

def pct(x):
    return "—" if x is None else f"{100 * x:.1f}"

rows, runs = [], []
for spec in sys.argv[3:]:
    name, depth, method, loss = spec.split("|")
    tlog = out / "logs" / f"{name}.train.log"
    if not tlog.exists():
        continue
    lines = tlog.read_text(encoding="utf-8").splitlines()
    epochs = [m.groups() for m in map(EPOCH.match, lines) if m]
    rules = next((m.group(1) for m in map(GRAMMAR.match, lines) if m), "?")
    times = dict(l.split("=", 1) for l in (out / "logs" / f"{name}.time").read_text().split()) \
        if (out / "logs" / f"{name}.time").exists() else {}
    selected, gold = None, {}
    mj = out / "models" / name / "model.json"
    if mj.exists():
        selected = json.loads(mj.read_text())["meta"]["selected"]
    elog = out / "logs" / f"{name}.eval.jsonl"
    if elog.exists():
        for line in elog.read_text().splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                gold[r["system"]] = r
    g = gold.get("T3 gold length (exact)")
    f = gold.get("T3 free (exact)")
    loss_shown = "—" if method == "perceptron" else loss
    for meth, lam, ep, f1, secs in epochs:
        is_sel = selected is not None and int(ep) == selected["epoch"] and \
            abs(float(lam) - selected["lam"]) <= 1e-12 * max(1.0, abs(selected["lam"]))
        rows.append("| " + " | ".join([
            depth, loss_shown, meth, "—" if meth == "perceptron" else lam, ep, f1,
            "**yes**" if is_sel else "",
            pct(g["token_f1"]) if is_sel and g else "", pct(g["bigram_f1"]) if is_sel and g else "",
            (f"{g['failed']}" if is_sel and g else ""),
        ]) + " |")
    runs.append("| " + " | ".join([
        name, rules, str(len(epochs)),
        times.get("train_seconds", "?"), times.get("eval_seconds", "?"), times.get("train_status", "?"),
        pct(f["cr"]) if f else "—", pct(f["token_f1"]) if f else "—",
        pct(g["cr"]) if g else "—",
    ]) + " |")

print("| depth | loss | method | λ | epoch | dev bigram F1 (gold length) | selected | gold-len token F1 "
      "| gold-len bigram F1 | gold-len failed |")
print("|---|---|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
print()
print("| run | grammar rules | epochs logged | train s | evaluate s | train exit | free CR "
      "| free token F1 (evaluate) | gold-len CR |")
print("|---|---|---|---|---|---|---|---|---|")
print("\n".join(runs))
EOF
log "table written to $OUT/table.md"
