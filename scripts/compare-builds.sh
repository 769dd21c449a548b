#!/usr/bin/env bash
# scripts/compare-builds.sh BIN BIN...: what one pitchside build gains over
# another on the venue mix, printed as a Markdown table (docs/src/performance.md,
# "Plain `cargo build --release` versus the package").
#
# For each binary, on the same 100,000 venue lines (`bench --mix venue --events
# 100000`, made by the first binary):
# - the instructions of `replay` raw off and raw on, from and to tmpfs, under
#   callgrind (the figure to trust on a shared VM), and the change against the
#   first binary;
# - the peak RSS `bench --mix venue` reports (1,000,000 lines, raw off), 3 runs
#   with the page cache dropped before each, the binaries taking turns;
# - its size, and whether every table but `progress` (which records wall-clock
#   times) is byte for byte the first binary's, file by file.
#
#   PITCHSIDE_SYMBOL_ORDER=off cargo build --release && cp target/release/pitchside /tmp/plain
#   scripts/pgo-build.sh && cp target/pgo/release/pitchside /tmp/pgo
#   scripts/compare-builds.sh /tmp/plain /tmp/pgo
#
# Needs valgrind, and root (to drop the page cache). About 20 s a binary on 2 cores.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: scripts/compare-builds.sh BIN BIN..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
[ -w /proc/sys/vm/drop_caches ] || { echo "needs root: drops the page cache before each bench" >&2; exit 1; }
bins=()
for b; do
  [ -f "$b" ] && [ -x "$b" ] || { echo "$b: not an executable" >&2; exit 1; }
  bins+=("$(realpath "$b")")   # a bare name would be looked up in PATH
done

say() { printf '== %s\n' "$*" >&2; }
work=$(mktemp -d -p /dev/shm compare-builds.XXXXXX)
trap 'rm -rf "$work"' EXIT

say "input: 100,000 venue lines (${bins[0]} bench --mix venue --events 100000)"
"${bins[0]}" bench --mix venue --events 100000 --dir "$work/in" > /dev/null
for raw in false true; do
  # The config bench builds for itself (src/commands/bench/mod.rs), on tmpfs.
  printf '[venue]\nid = "bench"\ngateway_id = "gw-bench"\n[detector]\nmax_keys = 10000\n[output]\nstore = "file://%s/store"\nspool_dir = "%s/spool"\nraw = %s\n[metrics]\nlisten = ""\n' \
    "$work" "$work" "$raw" > "$work/raw-$raw.toml"
done

# instructions I RAW: callgrind's total for binary number I's replay, whose
# tables it leaves in $work/out-I-RAW and their digests in $work/sums-I-RAW.
instructions() {
  local out=$work/out-$1-$2
  rm -rf "$work/store" "$work/spool" "$out"
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "${bins[$1]}" replay \
    --config "$work/raw-$2.toml" --input "$work/in/input.jsonl" --output "$out" \
    --received-at 2026-12-04T00:00:00Z --received-step 1ms > /dev/null 2> "$work/cg.log" ||
    { cat "$work/cg.log" >&2; exit 1; }
  # Per file, named by its path: the seq numbers in the names must match too.
  (cd "$out" && find . -type f ! -path './progress/*' -print0 | sort -z | xargs -0 sha256sum) > "$work/sums-$1-$2"
  [ -s "$work/sums-$1-$2" ] || { echo "${bins[$1]} wrote no tables" >&2; exit 1; }
  sed -n 's/^==[0-9]*== Collected : //p' "$work/cg.log"
}

declare -A ir rss
for i in "${!bins[@]}"; do
  for raw in false true; do
    say "${bins[$i]}: replay under callgrind, raw $raw"
    ir[$i-$raw]=$(instructions "$i" "$raw")
  done
done

for round in 1 2 3; do
  for i in "${!bins[@]}"; do
    say "${bins[$i]}: bench --mix venue, page cache dropped (round $round of 3)"
    sync; echo 3 > /proc/sys/vm/drop_caches
    mib=$("${bins[$i]}" bench --mix venue | sed -n 's/^peak RSS *\([0-9.]*\) MiB.*/\1/p')
    rss[$i]="${rss[$i]:-} $mib"
  done
done

# The table. Instructions in millions with thousands separators, and the change
# against the first binary.
millions() { # millions N [BASE]
  awk -v n="$1" -v base="${2:-}" 'BEGIN {
    s = sprintf("%.1f", n / 1e6); head = substr(s, 1, index(s, ".") - 1); tail = substr(s, index(s, "."))
    while (length(head) > 3) { tail = "," substr(head, length(head) - 2) tail; head = substr(head, 1, length(head) - 3) }
    out = head tail " M"
    if (base != "") { d = 100 * (n - base) / base; out = out sprintf(" (%s%.1f %%)", d < 0 ? "−" : "+", d < 0 ? -d : d) }
    print out }'
}
range() { tr ' ' '\n' | grep . | sort -n | sed -n '1p;$p' | paste -sd' ' | awk '{ print ($1 == $2 || $2 == "") ? $1 " MiB" : $1 "–" $2 " MiB" }'; }
same() { # same I: every table but progress of binary I as binary 0's, raw off and on
  local bad=0 raw
  for raw in false true; do
    cmp -s <(cut -c67- "$work/sums-0-$raw") <(cut -c67- "$work/sums-$1-$raw") || { echo "no: other files"; return; }
    bad=$((bad + $(diff "$work/sums-0-$raw" "$work/sums-$1-$raw" | grep -c '^>' || true)))
  done
  [ "$bad" -eq 0 ] && echo "yes ($(cat "$work/sums-0-false" "$work/sums-0-true" | wc -l) files)" || echo "no: $bad files differ"
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $cpu, $(nproc) cores; callgrind on 100,000 venue lines, peak RSS of \`bench --mix venue\` (1,000,000 lines, 3 runs)"
echo
echo "| build | size | instructions, raw off | instructions, raw on | peak RSS, raw off | tables but \`progress\` as the first build's |"
echo "|---|---|---|---|---|---|"
for i in "${!bins[@]}"; do
  base_off="" base_on="" tables="(the first)"
  if [ "$i" -gt 0 ]; then base_off=${ir[0-false]} base_on=${ir[0-true]} tables=$(same "$i"); fi
  printf '| `%s` | %s B | %s | %s | %s | %s |\n' "$(basename "${bins[$i]}")" \
    "$(stat -c %s "${bins[$i]}" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')" \
    "$(millions "${ir[$i-false]}" "$base_off")" "$(millions "${ir[$i-true]}" "$base_on")" \
    "$(echo "${rss[$i]}" | range)" "$tables"
done
