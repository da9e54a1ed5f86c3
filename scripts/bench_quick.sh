#!/usr/bin/env bash
# nbtok's quick benchmark subset: under ten minutes on 2 cores (see docs/benchmarks.md).
#
#   scripts/bench_quick.sh            every suite, current interpreter + working tree,
#                                     results recorded for HEAD in .asv/results,
#                                     HTML in .asv/html, charts + tables in docs/
#   NBTOK_BENCH_REGEX='bench_seed' scripts/bench_quick.sh     only matching suites
#   NBTOK_BENCH_SKIP_CHARTS=1 ...                             no charts / docs rewrite
#   NBTOK_BENCH_FIRST_RUN=1 ...      also time the first run with an empty numba cache (+4 min)
#
# Step 1 runs the two seed tables with 10 recorded samples (the docs use their minimum);
# step 2 runs everything else once per benchmark (asv --quick). Both use
# `--python=same` (the interpreter running asv, nothing installed) and
# `--set-commit-hash=HEAD` so the results are saved and `asv publish` can show them.
set -uo pipefail
cd "$(dirname "$0")/.."

REGEX="${NBTOK_BENCH_REGEX:-.}"
HASH="$(git rev-parse HEAD)"
ASV="${ASV:-asv}"
status=0

"$ASV" machine --yes >/dev/null

# asv ORs several -b options, so the selection is one regex: a look-ahead for REGEX
if python - "$REGEX" <<'PY'
import re, sys
names = ["bench_seed_bpe.SeedBPE.time_merge", "bench_seed_unigram.SeedUnigram.time_encode"]
sys.exit(0 if any(re.search(sys.argv[1], n) for n in names) else 1)
PY
then
  "$ASV" run --python=same --set-commit-hash="$HASH" --show-stderr --record-samples \
      -a repeat=10 -a processes=1 -a warmup_time=0.1 \
      -b "^(?=.*(?:${REGEX}))bench_seed_" || status=$?
fi

# every other suite, once per benchmark. Left out (they take many minutes each; they run in
# the full suite): the first-run compile timing with an empty numba cache
# (ColdStartNoCache; NBTOK_BENCH_FIRST_RUN=1 adds it back), BPE training on the 56 MB bench
# corpus (TrainBench; the CS336 small training case stays in), and the track_ ratio suites
# that re-time both sides several times (bench_bytelevel.Ratios, bench_pipeline.PaddedRatio):
# scripts/bench_charts.py derives the same ratios from the time_ results of this run.
# In the SentencePiece batch suite the quick subset keeps one BPE and one Unigram model
# (llama_bpe_32k, sp_unigram_wmtende); the full suite has all four.
SLOW="ColdStartNoCache|TrainBench|bench_bytelevel\\.Ratios|PaddedRatio|bench_sentencepiece\\.Ratios"
SLOW="$SLOW|bench_sentencepiece\\.EncodeBatch\\.time_encode_batch\\('(?:unigram_32k|sp_bpe_bpemb_en)'"
[ -n "${NBTOK_BENCH_FIRST_RUN:-}" ] && SLOW="${SLOW#ColdStartNoCache|}"
"$ASV" run --python=same --set-commit-hash="$HASH" --show-stderr --quick \
    -b "^(?=.*(?:${REGEX}))(?!bench_seed_)(?!.*(?:${SLOW}))" || status=$?

"$ASV" publish || status=$?

if [ -z "${NBTOK_BENCH_SKIP_CHARTS:-}" ]; then
  python scripts/bench_charts.py || status=$?
fi
exit $status
