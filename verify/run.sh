#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Model-check weft's sleep protocols and its latch protocol with SPIN
# (verify/sleep.pml: targeted; verify/wake_all.pml: wake-all; both include
# verify/shared*.pml), and the deque's forced steal (verify/deque.pml);
# verify/README.md explains the models and the results.
#
#   verify/run.sh              run every check; exit 0 only if every correct
#                              model passes and every broken variant is rejected
#   verify/run.sh --all        also the bigger configurations (minutes, GBs)
#   verify/run.sh NAME...      run only the named checks
#   verify/run.sh --list       list the checks
#   verify/run.sh --trail NAME print the counterexample of a rejected check,
#                              one line per step of a process
#   VERIFY_JOBS=N              checks run N at a time (default: one per CPU)
#
# Needs spin and a C compiler. Build products go to a temporary directory.
set -u

here=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-gcc}
# Exhaustive search, state vectors compressed; pan stops (and the check fails
# as incomplete) if it would need more than MEMLIM MB.
PAN_CFLAGS=(-O1 -w -DSAFETY -DCOLLAPSE -DMEMLIM=2048)
PAN_DEPTH=200000

# name | expected | what it shows | spin -D flags [| model: sleep (default), wake_all, deque or frames
#   [| memory limit in MB, default 2048]]
#   pass      exhaustive search, no assertion violation, no invalid end state
#   lost      SPIN finds an invalid end state (a thread blocked for ever while a
#             job is queued or a latch is set); assertions are ignored (-A) so
#             that the counterexample is a lost wake-up
#   assert    SPIN finds an assertion violation
CHECKS=(
"sleep|pass|no lost wake-up, invariants hold (C11, 2 workers, 2 jobs, JEC mod 2)|"
"sleep-rayon-wake|pass|the same with Rayon's wake rule: a job on a non-empty queue always wakes|-DRAYON_WAKE"
"sleep-3|pass|no lost wake-up, invariants hold (C11, 3 workers, 1 job)|-DW=3 -DNJOBS=1"
"sleep-jec4|pass|no lost wake-up, invariants hold (C11, 2 workers, 2 jobs, JEC mod 4)|-DJEC_MOD=4"
"sleep-context|pass|no lost wake-up, invariants hold (C11, 3 workers, no jobs: latches only, a context owner too)|-DCONTEXT -DNJOBS=0 -DW=3"
"sleep-tso|pass|no lost wake-up, invariants hold (x86-TSO, 2 workers, 2 jobs)|-DTSO"
"broken-final-check|lost|final injector check removed (C11; JEC mod 8: no wrap-around needed)|-DNO_FINAL_CHECK -DJEC_MOD=8"
"broken-final-check-wrap|lost|final check removed (TSO; owner 0 never returns; JEC mod 2 wraps)|-DTSO -DNO_FINAL_CHECK -DOWNER_LEAVES -DJEC_MOD=2"
"no-final-check-no-wrap|pass|control: the same with JEC mod 8 (never wraps) passes|-DTSO -DNO_FINAL_CHECK -DOWNER_LEAVES -DJEC_MOD=8"
"broken-push-fence|lost|PushFence removed (TSO: the push waits in the store buffer)|-DTSO -DNO_PUSH_FENCE"
"broken-sleep-fence|lost|SleepFence removed (C11: the final check is an unordered load)|-DNO_SLEEP_FENCE"
"broken-waker-no-lock|lost|wake_specific without the slot lock|-DNO_WAKER_LOCK"
"broken-drowsy-after-count|lost|DROWSY stored after the counting CAS (C11: the wake hint goes stale)|-DDROWSY_AFTER_COUNT"
"broken-latch-no-cas|lost|latch owner stores SLEEPING instead of CAS SLEEPY->SLEEPING|-DLATCH_NO_CAS"
"broken-context-no-cas|lost|the same for a context owner (latches only)|-DCONTEXT_NO_CAS -DCONTEXT -DNJOBS=0"
"finding-inv1|assert|weft as is: inactive <= threads (sleep.c invariant 1) fails while a woken worker counts twice|-DSTRICT_INV1"
"broken-old-wake|assert|weft before e0e49d2 (waker left the woken worker inactive): sleeping <= inactive fails|-DOLD_WAKE"
"broken-no-handover|lost|leave hand-over removed (weft before it): a job waits for a latch owner that left the loop (TSO)|-DTSO -DOWNER_LEAVES -DNO_LEAVE_HANDOVER"
"owner-leaves|pass|no job waits for a latch owner that left the loop: the leave hand-over (C11, 2 workers, 2 jobs)|-DOWNER_LEAVES"
"sleep-finder-stays|pass|no lost wake-up when a found job runs for ever: the found hand-over (C11, 2 workers, 2 jobs)|-DFINDER_MAY_STAY"
"broken-no-found-handover|lost|the same without the found hand-over: a job posted while the finder still searched waits for it|-DFINDER_MAY_STAY -DNO_FOUND_HANDOVER"
"broken-defer-unguarded|lost|a post onto a non-empty queue leaves its wake-up to a wake-up in flight when none is (in_flight.h)|-DDEFER_UNGUARDED"
"sleep-timed|pass|no lost wake-up, invariants hold with timed self-wake-ups (leave.c's prediction; C11, 2 workers, 2 jobs)|-DTIMED"
"broken-self-wake-no-lock|assert|a timed self-wake-up without the slot lock: it and a waker both uncount the sleeper|-DTIMED -DSELF_WAKE_NO_LOCK"
"wake-all|pass|wake-all: no lost wake-up, latches tickle (C11, 2 workers, 2 jobs)||wake_all"
"wake-all-tso|pass|wake-all: the same under x86-TSO|-DTSO|wake_all"
"wake-all-owner-leaves|pass|wake-all: no job waits for a latch owner that left, without a hand-over (C11)|-DOWNER_LEAVES|wake_all"
"wake-all-latches-3|pass|wake-all: no lost wake-up (C11, 3 workers, no jobs: latches only)|-DW=3 -DNJOBS=0|wake_all"
"wake-all-broken-final-check|lost|wake-all without SleepFence and final check: legacy Rayon (C11)|-DNO_FINAL_CHECK|wake_all"
"wake-all-no-final-check-tso|pass|control: the same under x86-TSO passes (the PushFence suffices there)|-DTSO -DNO_FINAL_CHECK|wake_all"
"wake-all-broken-sleep-fence|lost|wake-all, SleepFence removed (C11: the final check is an unordered load)|-DNO_SLEEP_FENCE|wake_all"
"wake-all-broken-push-fence|lost|wake-all, PushFence removed (TSO: the push waits in the store buffer)|-DTSO -DNO_PUSH_FENCE|wake_all"
"wake-all-broken-latch-release|lost|wake-all, latch set by a release exchange: its SET waits past the tickle's load (C11)|-DLATCH_RELEASE -DNJOBS=0|wake_all"
"wake-all-broken-tickle-lock|lost|wake-all, the tickle bumps the epoch without its lock|-DNO_TICKLE_LOCK|wake_all"
"deque|pass|the deque: every job taken once, no sleeper beside a stranded job (x86-TSO, owner and 2 thieves, 2 jobs)|-DNJOBS=2|deque"
"deque-broken-no-heavy|assert|the deque, forced steal without the heavy barrier: a job taken twice|-DNJOBS=2 -DNO_HEAVY|deque"
"deque-broken-owner-no-cas|assert|the deque, owner takes its last private job without CAS: a job taken twice|-DNJOBS=2 -DNO_OWNER_CAS|deque"
"deque-broken-lower-after|assert|the deque, reclaim lowers bottom after its CAS: a job taken twice|-DNJOBS=2 -DNO_LOWER_FIRST|deque"
"deque-broken-no-episode-fence|lost|the deque without the episode fence: a sleeper beside a stranded job|-DNJOBS=2 -DNO_EPISODE_FENCE|deque"
"deque-broken-no-private-check|lost|the deque, sleepers ignore private jobs: a sleeper beside a stranded job|-DNJOBS=2 -DNO_PRIVATE_CHECK|deque"
"deque-broken-no-private-handover|lost|the deque, the last searcher hands over for public jobs only: a sleeper beside a job kept private for that searcher|-DNJOBS=2 -DNO_PRIVATE_HANDOVER|deque"
"deque-broken-spent-on-answer|lost|the deque, a forced sweep that lost to the owner's answer or a moved ts counts as spent, and answers are not counted: a sleeper beside a job pushed after that answer|-DNJOBS=2 -DSPENT_ON_ANSWER -DNO_ANSWER_COUNT|deque"
"frames|pass|join frames (src/core/frame.c): every B run once, with the tag it was forked under, no sleeper beside a stranded frame, no owner waiting for ever (x86-TSO, owner and 2 thieves, 2 forks, a change of the tag)|-DNJOBS=2|frames"
"frames-broken-no-stamp|assert|join frames, the owner changes its tag without stamping its private frames: a B taken with another job's group or priority|-DNJOBS=2 -DNO_STAMP|frames"
"frames-no-publish-alone|pass|join frames without publishing the first private frame when nothing is published: correct too (the rule is for speed; no change of the tag)|-DNJOBS=2 -DNO_PUBLISH_ALONE -DNRETAG=0|frames"
"frames-broken-no-heavy|assert|join frames, forced steal without the heavy barrier: a B run twice|-DNJOBS=2 -DNO_HEAVY|frames"
"frames-broken-pop-ignores-bits|assert|join frames, the pop's fast path ignores lock and req: a B run twice|-DNJOBS=2 -DNO_POP_BITS|frames"
"frames-broken-no-episode-fence|lost|join frames without the episode fence: a sleeper beside a stranded frame|-DNJOBS=2 -DNO_EPISODE_FENCE|frames"
"frames-broken-no-private-check|lost|join frames, sleepers ignore private frames: a sleeper beside a stranded frame|-DNJOBS=2 -DNO_PRIVATE_CHECK|frames"
"frames-broken-no-private-handover|lost|join frames, the last searcher hands over for published frames only|-DNJOBS=2 -DNO_PRIVATE_HANDOVER|frames"
"frames-broken-fork-ignores-bits|lost|join frames, a fork past the first private one ignores lock and req: a sleeper beside a stranded frame (3 forks)|-DNJOBS=3 -DNO_FORK_BITS|frames"
"frames-broken-spent-on-late-answer|lost|join frames, a spent look outlives the owner's answer: a sleeper beside a frame forked after it (3 forks)|-DNJOBS=3 -DSPENT_ON_ANSWER|frames"
"frames-wait|pass|join frames, the owner's A waits for one of its own B, running its own work meanwhile: every B once, nobody waits for ever (2 thieves, 2 forks)|-DNJOBS=2 -DWAIT_IN_A|frames"
"frames-wait-retag|pass|the same with one thief and a change of the tag: the frames published by the wait carry the tags they were forked under|-DNJOBS=2 -DNT=1 -DWAIT_IN_A -DNRETAG=1|frames"
"frames-wait-alone|pass|the same with every other worker busy for ever (no thief, 3 forks): the wait runs what it owns|-DNJOBS=3 -DNT=0 -DWAIT_IN_A|frames"
"frames-wait-no-force|pass|the same beside a thief that never takes a frame by force (no process-wide barrier; 2 forks)|-DNJOBS=2 -DNT=1 -DWAIT_IN_A -DNO_FORCE|frames"
"frames-broken-wait-no-self-publish|lost|a waiting owner that does not publish its own private frames, every other worker busy: it waits for ever for its own B|-DNJOBS=2 -DNT=0 -DWAIT_IN_A -DNO_SELF_PUBLISH|frames"
"frames-broken-wait-no-self-publish-no-force|lost|the same beside a thief without the barrier: its requests are never answered|-DNJOBS=2 -DNT=1 -DWAIT_IN_A -DNO_SELF_PUBLISH -DNO_FORCE|frames"
"spares|pass|spare threads, 2 jobs blocking twice each, 1 spare: counts consistent, every block served, every spare parked in the end|-DNJ=2 -DNS=1|spares"
"spares-2|pass|the same with 2 spares|-DNJ=2 -DNS=2|spares"
"spares-broken-no-recall|lost|a released spare parks without taking the call a begin could not serve meanwhile: a blocked job waits for ever|-DNJ=2 -DNS=1 -DNO_RECALL|spares"
)

# Bigger configurations, run with --all (several minutes more here, and up
# to the memory limit given last).
EXTRA=(
"owner-leaves-3|pass|the same with 3 workers, 1 job (C11)|-DW=3 -DNJOBS=1 -DOWNER_LEAVES"
"sleep-timed-3|pass|the same with 3 workers, 1 job (C11)|-DTIMED -DW=3 -DNJOBS=1|sleep|8000"
"sleep-context-1|pass|no lost wake-up, invariants hold (C11, 2 workers, 1 job, a context owner)|-DCONTEXT -DNJOBS=1"
"wake-all-3|pass|wake-all: no lost wake-up (C11, 3 workers, 1 job)|-DW=3 -DNJOBS=1|wake_all"
"deque-3|pass|the deque with 3 jobs: every job taken once, no sleeper beside a stranded job (x86-TSO)|-DNJOBS=3|deque|16000"
"deque-broken-spent-on-late-answer|lost|the deque with 3 jobs, a spent forced sweep outlives the owner's answer (weft before the answer count): a sleeper beside a job pushed after it|-DNJOBS=3 -DNO_ANSWER_COUNT|deque|8000"
"frames-3|pass|join frames with 3 forks (no change of the tag: frames checks that, with 2)|-DNJOBS=3 -DNRETAG=0|frames|8000"
)

field() { # field N LINE
    local IFS='|'
    # shellcheck disable=SC2206
    local f=($2)
    printf '%s' "${f[$1]:-}"
}

find_check() {
    local c
    for c in "${CHECKS[@]}" "${EXTRA[@]}"; do
        if [ "$(field 0 "$c")" = "$1" ]; then
            printf '%s' "$c"
            return 0
        fi
    done
    return 1
}

need_tools() {
    if ! command -v spin >/dev/null 2>&1; then
        echo "FAIL spin not found (apt-get install spin)"
        exit 1
    fi
    if ! command -v "$CC" >/dev/null 2>&1; then
        echo "FAIL $CC not found"
        exit 1
    fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/weft-verify.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# the model a check runs: sleep (default), wake_all, deque, frames or spares
model_of() { # model_of LINE
    local m
    m=$(field 4 "$1")
    printf '%s' "${m:-sleep}"
}

# build NAME FLAGS MODEL [CFLAG]: generate and compile pan in $tmp/NAME
build() {
    local dir=$tmp/$1
    mkdir -p "$dir"
    cp "$here"/*.pml "$dir/"
    # shellcheck disable=SC2086
    (cd "$dir" && spin $2 -a "$3.pml" >spin.out 2>&1) || {
        echo "FAIL $1: spin -a failed"
        sed 's/^/    /' "$dir/spin.out"
        return 1
    }
    (cd "$dir" && "$CC" "${PAN_CFLAGS[@]}" ${4:+"$4"} -o pan pan.c >cc.out 2>&1) || {
        echo "FAIL $1: compiling pan.c failed"
        sed 's/^/    /' "$dir/cc.out" | head -20
        return 1
    }
}

passed=0
failed=0

run_check() {
    local line=$1
    local name expect what flags model dir out states secs t0 t1 panargs
    name=$(field 0 "$line")
    expect=$(field 1 "$line")
    what=$(field 2 "$line")
    flags=$(field 3 "$line")
    model=$(model_of "$line")
    dir=$tmp/$name
    local mem
    mem=$(field 5 "$line")
    if ! build "$name" "$flags" "$model" ${mem:+"-DMEMLIM=$mem"}; then
        failed=$((failed + 1))
        return
    fi
    panargs=("-m$PAN_DEPTH")
    [ "$expect" = lost ] && panargs+=(-A)
    t0=$(date +%s.%N)
    (cd "$dir" && ./pan "${panargs[@]}" >pan.out 2>&1)
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    out=$dir/pan.out
    states=$(awk '/states, stored/ { print $1; exit }' "$out")
    local errors incomplete
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$out" | head -1)
    incomplete=0
    grep -q -e 'Search not completed' -e 'max search depth too small' \
        -e 'reached -DMEMLIM bound' "$out" && incomplete=1
    local ok=0 why=""
    case $expect in
    pass)
        if [ "$errors" = 0 ] && [ $incomplete = 0 ]; then
            ok=1
            why="$what ($states states, ${secs}s)"
        elif [ $incomplete = 1 ] && [ "$errors" = 0 ]; then
            why="search incomplete ($states states)"
        else
            why="spin found an error: $(grep -m1 -e 'pan:1:' "$out")"
        fi
        # The main models must not be vacuous: every worker statement is
        # reachable, except the submitter's store-buffer drain in the inline
        # they share.
        if [ $ok = 1 ] && { [ "$name" = sleep ] || [ "$name" = wake-all ]; }; then
            local unreached
            unreached=$(awk '/^unreached in proctype Worker/ { on = 1; next }
                             /^unreached in/ { on = 0 }
                             on && /\.pml:/ && !/"(sb = 0|uf = 1|lrel = pushes)"/' "$out")
            if [ -n "$unreached" ]; then
                ok=0
                why="Worker statements unreachable (vacuous model?): $(echo "$unreached" | head -3 | tr -s '\t\n' '  ')"
            fi
        fi
        ;;
    lost)
        if grep -q 'pan:1: invalid end state' "$out"; then
            ok=1
            why="rejected as expected: lost wake-up, $what"
        else
            why="expected a lost wake-up (invalid end state), spin found none ($states states)"
        fi
        ;;
    assert)
        if grep -q 'pan:1: assertion violated' "$out"; then
            ok=1
            why="rejected as expected: $what"
        else
            why="expected an assertion violation, spin found none ($states states)"
        fi
        ;;
    esac
    if [ $ok = 1 ]; then
        printf 'ok  %s: %s\n' "$name" "$why"
        passed=$((passed + 1))
    else
        printf 'FAIL %s: %s\n' "$name" "$why"
        failed=$((failed + 1))
    fi
}

# One line per step: pid, process, model line, what it did.
trail() {
    local line name expect flags model dir
    line=$(find_check "$1") || { echo "no check named $1" >&2; exit 2; }
    name=$1
    expect=$(field 1 "$line")
    flags=$(field 3 "$line")
    model=$(model_of "$line")
    dir=$tmp/$name
    # -DREACH: with -i, pan then finds a shortest counterexample
    build "$name" "$flags" "$model" -DREACH || exit 1
    local panargs=("-m$PAN_DEPTH" -i)
    [ "$expect" = lost ] && panargs+=(-A)
    (cd "$dir" && ./pan "${panargs[@]}" >pan.out 2>&1)
    if [ ! -f "$dir/$model.pml.trail" ]; then
        echo "$name: spin found no counterexample" >&2
        exit 1
    fi
    echo "# $name: spin $flags $model.pml (shortest counterexample found)"
    if [ "$model" = wake_all ]; then
        echo "# pids: 0 Submitter, 1 Setter, 2 Memory, 3 init, 4.. Worker 0.. (a line: pid, process, model file:line, steps)"
        echo "# latch: 0 UNSET 3 SET; latch[W] = LJOB; lsleepy: the sleepy worker + 1; lasleep: the asleep bit"
        echo "# stale, eq: bit i for worker i: the epoch changed since i read it / i waits on it"
        echo "# phase: 0 searching, 2 sleepy; ghosts (know, rel, bumping, ...) omitted"
    else
        echo "# pids: 0 Submitter, 1 Setter, 2 Memory, 3 init, 4.. Worker 0.., then Context (a line: pid, process, model file:line, steps)"
        echo "# word: 0 AWAKE 1 DROWSY 2 ASLEEP; latch: 0 UNSET 1 SLEEPY 2 SLEEPING 3 SET; latch[W] = LJOB"
        echo "# phase: 0 searching, 1 get sleepy next, 2 sleepy; ghosts (know, rel, counted, ...) omitted"
    fi
    # shellcheck disable=SC2086
    (cd "$dir" && spin $flags -t -p "$model.pml" 2>&1) |
        sed -n -E 's/^ *[0-9]+:[[:space:]]+proc +([0-9]+) \(([A-Za-z]+)[^)]*\) ([a-z_]+\.pml:[0-9]+) \(state [0-9]+\)[[:space:]]+(.*)$/\1 \2 \3 \4/p' |
        grep -v -e '\[(1)\]' -e '\.(goto)' -e '\[else\]' -e '\[break\]' -e 'assert(' \
            -e 'run Worker' -e 'cur = (' -e '\[know\[' -e '\[l\{0,1\}rel = ' \
            -e '\[wk\[' -e '\[uf = ' -e '\[pops = ' -e '\[counted\[' -e '\[waking\[' \
            -e '\[bumping = ' \
            -e '\[seen = ' -e '\[(!(stop))\]$' -e '\[(ok)\]$' -e '\[(stop)\]$' -e '\[(got)\]$' |
        grep -v -E '\[(ok|woke|n|i|old|stop|got|more|c_in|c_sl|nonempty|seen|was_empty) = 0\]$' |
        awk '{ key = $1 " " $3; txt = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", txt)
               if (key != prev) { if (NR > 1) printf "\n"; printf "%-3s %-10s %-17s %s", $1, $2, $3, txt }
               else printf "  %s", txt
               prev = key }
             END { printf "\n" }'
    echo "# end state:"
    # shellcheck disable=SC2086
    (cd "$dir" && spin $flags -t "$model.pml" 2>&1) | sed -n '/processes:/,$p' | grep -e 'proc ' | sed 's/^/#   /'
}

case ${1:-} in
--list)
    for c in "${CHECKS[@]}" "${EXTRA[@]}"; do
        printf '%-30s %-6s %s\n' "$(field 0 "$c")" "$(field 1 "$c")" "$(field 2 "$c")"
    done
    exit 0
    ;;
--trail)
    [ $# -eq 2 ] || { echo "usage: $0 --trail NAME" >&2; exit 2; }
    need_tools
    trail "$2"
    exit 0
    ;;
-h | --help)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
esac

# Run the checks given as lines, VERIFY_JOBS at a time (default: one per
# CPU; each search is single-threaded and the checks are independent, each
# in a directory of its own), and print their results in the given order as
# soon as the checks before them are done.
run_checks() {
    local -a names=()
    local next=0 c n
    flush() {
        while [ $next -lt ${#names[@]} ] && [ -e "$tmp/${names[$next]}.done" ]; do
            cat "$tmp/${names[$next]}.result"
            if head -n 1 "$tmp/${names[$next]}.result" | grep -q '^ok '; then
                passed=$((passed + 1))
            else
                failed=$((failed + 1))
            fi
            next=$((next + 1))
        done
    }
    for c in "$@"; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
            wait -n 2>/dev/null
            flush
        done
        n=$(field 0 "$c")
        names+=("$n")
        (
            run_check "$c" >"$tmp/$n.result" 2>&1
            touch "$tmp/$n.done"
        ) &
    done
    wait
    flush
}

need_tools
jobs_max=${VERIFY_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
[ "$jobs_max" -ge 1 ] 2>/dev/null || jobs_max=1
start=$(date +%s)
if [ "${1:-}" = --all ]; then
    run_checks "${CHECKS[@]}" "${EXTRA[@]}"
elif [ $# -gt 0 ]; then
    selected=()
    for n in "$@"; do
        if c=$(find_check "$n"); then
            selected+=("$c")
        else
            echo "FAIL $n: no such check (see --list)"
            failed=$((failed + 1))
        fi
    done
    [ ${#selected[@]} -eq 0 ] || run_checks "${selected[@]}"
else
    run_checks "${CHECKS[@]}"
fi
echo "# $(($(date +%s) - start))s"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
