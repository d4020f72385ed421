#!/usr/bin/env bash
# Evaluate a model (default: the embedded default model) on the three dev files at free length and at gold
# length, printing one markdown table (the numbers in docs/models.md).  Usage: scripts/evaluate_default.sh [MODEL_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
MODEL=${1:-}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
model_args=()
[ -n "$MODEL" ] && model_args=(--model "$MODEL")
header=1
for dev in broadcast.dev written.dev eval.dev; do
    for mode in free gold; do
        length_args=()
        [ "$mode" = gold ] && length_args=(--length gold)
        "$BIN/dualdecomp" compress "${model_args[@]}" --input "data/corpora/$dev.jsonl" \
            --output "$OUT/$dev.$mode.jsonl" "${length_args[@]}" --quiet
        row=$("$BIN/dualdecomp" evaluate --input "data/corpora/$dev.jsonl" --output "$OUT/$dev.$mode.jsonl" \
            --markdown --name "$dev, $mode length")
        if [ $header = 1 ]; then echo "$row"; header=0; else echo "$row" | tail -n 1; fi
    done
done
