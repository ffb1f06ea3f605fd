#!/bin/sh
# Which runs read the same rows after every step (instant times and file ids normalized): one
# line per scenario, version, table type and flag, with a hash of the rows per index / metadata
# setting. Equal hashes = the same rows at every step. Run from the worktree: sh docs/design/global-indexes/crosscheck.sh
cd "$(dirname "$0")/out" || exit 1
for sc in move stale edge delright insert; do for v in 0.15.0 1.2.0; do for k in cow mor; do
  for fl in default false; do
    sums=""
    for f in "$sc/$v-$k-GLOBAL_"*"-$fl-md"*.txt; do
      [ -f "$f" ] || continue
      h=$(python3 ../normalize.py "$f" | grep -E "^## step|^  [kn]|^ [a-z_]+:" | md5sum | cut -c1-6)
      sums="$sums $(basename "$f" .txt | sed "s/$v-$k-//"):$h"
    done
    echo "$sc $v $k $fl:$sums"
  done
done; done; done
