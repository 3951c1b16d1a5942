#!/usr/bin/env bash
# Mutation testing (StrykerJS, stryker.config.mjs) of the modules given, or of the files under src/
# that differ from main (committed on this branch, staged, unstaged or new) when none is given.
# Incremental: mutants whose code and tests did not change since the last run keep their result.
#
#   scripts/mutation.sh                                    # what this branch changed
#   scripts/mutation.sh src/domain/studies/page-token.ts   # one module
#   scripts/mutation.sh src/domain/loop                    # a folder: every module under it
#   scripts/mutation.sh src/domain/loop/lease.ts:40-80     # some lines only
#   scripts/mutation.sh src/domain/loop -- --force         # after --, options for `stryker run`
#
# Runs at nice 10 (NICE to change it) with one test runner (STRYKER_CONCURRENCY to change it).
# Reports: bench-results/mutation/mutation.html and .json.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=()
extra=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; extra=("$@"); break; fi
  targets+=("$1"); shift
done

patterns=()
if [ ${#targets[@]} -eq 0 ]; then
  base=$(git merge-base HEAD main)
  while IFS= read -r f; do
    [ -f "$f" ] && patterns+=("$f")
  done < <({ git diff --name-only "$base" -- 'src/*.ts'; git ls-files --others --exclude-standard -- 'src/*.ts'; } | grep -v '\.d\.ts$' | sort -u)
  if [ ${#patterns[@]} -eq 0 ]; then
    echo "mutation.sh: no module under src/ differs from main; name the modules to test" >&2
    exit 0
  fi
else
  for t in "${targets[@]}"; do
    path=${t%%:*}
    t=${t%/}
    if [ -d "$path" ]; then patterns+=("${t%/}/**/*.ts" "!${t%/}/**/*.d.ts")
    elif [ -f "$path" ]; then patterns+=("$t")
    else echo "mutation.sh: no such module: $path" >&2; exit 2
    fi
  done
fi

mutate=$(IFS=,; echo "${patterns[*]}")
echo "mutation.sh: mutating ${mutate}" >&2
exec nice -n "${NICE:-10}" npx stryker run --mutate "$mutate" "${extra[@]}"
