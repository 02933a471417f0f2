#!/usr/bin/env bash
# Runs unixagent's fuzz targets for a short time each on the stable
# toolchain: libFuzzer with coverage instrumentation and no sanitizer.
#
#   fuzz/run.sh                  every target, FUZZ_SECONDS each (default 30)
#   fuzz/run.sh classify         one target
#   FUZZ_SECONDS=600 fuzz/run.sh openai_sse
#
# Installs cargo-fuzz if it is missing. New inputs go to fuzz/corpus/TARGET,
# crashes to fuzz/artifacts/TARGET (both gitignored); the script stops with
# a non-zero status at the first target that panics, spends more than 10 s
# on one input or runs out of memory, after cargo-fuzz has printed how to
# reproduce it.
set -euo pipefail

cd "$(dirname "$0")"
cargo=${CARGO:-cargo}
seconds=${FUZZ_SECONDS:-30}
all=(anthropic_sse openai_sse classify osc proxy_head)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all[@]}"); fi

if ! "$cargo" fuzz --version >/dev/null 2>&1; then
    "$cargo" install cargo-fuzz --locked
fi

# The classifier's corpus files hold one command per line; libFuzzer wants
# one input per file. Lines of classify-corpus.txt start with the expected
# risk, which is dropped.
classify_seeds() {
    local dir=corpus/classify-seeds fixtures=../crates/ua-policy/tests/fixtures
    rm -rf "$dir"
    mkdir -p "$dir"
    awk -v dir="$dir" '
        /^[[:space:]]*(#|$)/ { next }
        {
            line = $0
            if (FILENAME ~ /classify-corpus/) sub(/^[^ ]+ +/, "", line)
            file = sprintf("%s/%04d", dir, ++n)
            printf "%s", line > file
            close(file)
        }' "$fixtures"/*.txt
    echo "$dir"
}

for target in "${targets[@]}"; do
    extra=()
    case "$target" in
        anthropic_sse | openai_sse) seeds=../crates/ua-backend/tests/fixtures ;;
        classify)
            seeds=$(classify_seeds)
            extra=(-dict=classify.dict)
            ;;
        osc | proxy_head)
            seeds=seeds/$target
            extra=(-dict=$target.dict)
            ;;
        *)
            echo "fuzz/run.sh: unknown target '$target'; the targets are: ${all[*]}." >&2
            exit 2
            ;;
    esac
    mkdir -p "corpus/$target"
    echo "== fuzzing $target for ${seconds}s"
    "$cargo" fuzz run --sanitizer none "$target" "corpus/$target" "$seeds" -- \
        -max_total_time="$seconds" -timeout=10 -print_final_stats=1 ${extra[@]+"${extra[@]}"}
done
