#!/usr/bin/env bash
# compare.sh: teamrun side by side with the physical floor and go-task, in
# one interleaved run on this machine; prints medians, their ratios, and
# the range of the rounds' own ratios (how far the machine moved meanwhile).
#
#   bash bench/compare.sh                  # 5 rounds, 1,000 and 10,000 tasks
#   ROUNDS=7 BIG=0 bash bench/compare.sh   # 7 rounds, skip the 10,000-task figures
#   TEAMRUN=/path/to/teamrun bash bench/compare.sh   # measure another build
#   BASELINE=/path/to/old/teamrun bash bench/compare.sh  # and an older build in the same rounds
#   ONLY=restore BASELINE=... bash bench/compare.sh  # only the restore, plan and restore-RSS figures (no cold runs)
#
# Builds teamrun from this checkout, go-task v3.54.0 from the module proxy
# and the floor programs (bench/floor, bench/hello) into $WORK (a temp dir).
# Every round runs each contender once, in the same order, so that all of
# them see the same machine load; a figure is the median over the rounds.
# The workflow ratio has a floor of its own: the direct floor with 8 tasks
# at once (their syncs shared) against one at a time, which is what this
# machine's cores give to starting processes in parallel.
set -euo pipefail

if [ -z "${EPOCHREALTIME:-}" ]; then
	echo "compare.sh: needs bash 5 or later (its clock, EPOCHREALTIME); this is bash $BASH_VERSION" >&2
	exit 2
fi
ROUNDS=${ROUNDS:-5}
BIG=${BIG:-1}
N=1000
NBIG=10000
root=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-$(mktemp -d)}
bin=$WORK/bin
mkdir -p "$bin"

echo "building into $WORK ..." >&2
(cd "$root" && go build -o "$bin/floor" ./bench/floor && go build -o "$bin/hello" ./bench/hello)

# depsprobe NAME EXCLUDE: a hello-world that links every package outside
# teamrun itself that teamrun links, but EXCLUDE (an ERE); their
# package inits run as in teamrun. Its start-up is the floor those
# libraries set: teamrun's own code cannot start faster than it. The
# program is written into $WORK and laid over the module with -overlay,
# so the checkout is never touched.
depsprobe() {
	local name=$1 exclude=$2 src=$WORK/$1/main.go pkgs
	mkdir -p "$WORK/$name"
	pkgs=$(cd "$root" && go list -deps ./cmd/teamrun |
		grep -v -E '^(github.com/teamrun/|vendor/)|(^|/)internal(/|$)' | grep -v -E "$exclude")
	{
		printf 'package main\n\nimport (\n\t"fmt"\n'
		for p in $pkgs; do printf '\t_ "%s"\n' "$p"; done
		printf ')\n\nfunc main() { fmt.Println("hello") }\n'
	} >"$src"
	printf '{"Replace":{"%s":"%s"}}' "$root/bench/$name/main.go" "$src" >"$WORK/$name/overlay.json"
	(cd "$root" && go build -overlay "$WORK/$name/overlay.json" -o "$bin/$name" "./bench/$name")
}
if [ "${ONLY:-}" != restore ]; then
	depsprobe deps '^$'
	depsprobe depslean 'santhosh-tekuri/jsonschema|urfave/cli|russross/blackfriday|cpuguy83/go-md2man'
fi
[ "${ONLY:-}" = restore ] || [ -x "$bin/task" ] || GOBIN=$bin go install github.com/go-task/task/v3/cmd/task@v3.54.0
teamrun=${TEAMRUN:-$bin/teamrun}
[ -n "${TEAMRUN:-}" ] || (cd "$root" && go build -o "$teamrun" ./cmd/teamrun)

# ---- the teams ----
team() { # team FILE N PROCESS AGENT-LINE [CONTEXT-LINE]
	local file=$1 n=$2 process=$3 agent=$4 ctx=${5:-}
	{
		echo "name: bench"
		echo "process: $process"
		echo "agents:"
		echo "  t:"
		echo "    $agent"
		echo "tasks:"
		for ((i = 0; i < n; i++)); do
			echo "  t$i:"
			echo "    description: task $i"
			echo "    agent: t"
			if [ -n "$ctx" ]; then echo "    $ctx"; fi
		done
	} >"$file"
}
mkdir -p "$WORK"/{cmd,sh,wf,big,v,gotask}
team "$WORK/cmd/team.yaml" $N sequential 'command: ["true"]'
team "$WORK/sh/team.yaml" $N sequential 'shell: "true"'
team "$WORK/wf/team.yaml" $N workflow 'command: ["true"]' 'context: []'
team "$WORK/big/team.yaml" $NBIG sequential 'command: ["true"]'
team "$WORK/v/team.yaml" 10 sequential 'command: ["true"]'
# taskfile FILE CMD: go-task's 1,000 tasks running CMD. go-task runs its
# cmds in a shell interpreter of its own (mvdan.cc/sh), whose `true` is a
# builtin: Taskfile.yml starts no process at all (strace: one execve for
# the whole run); Taskfile-exec.yml's /bin/true is a process per task, as
# teamrun's are.
taskfile() {
	local file=$1 cmd=$2
	{
		echo "version: '3'"
		echo "tasks:"
		echo "  default:"
		echo "    cmds:"
		for ((i = 0; i < N; i++)); do echo "      - task: t$i"; done
		for ((i = 0; i < N; i++)); do printf '  t%d:\n    cmds: ["%s"]\n' "$i" "$cmd"; done
	} >"$file"
}
taskfile "$WORK/gotask/Taskfile.yml" true
taskfile "$WORK/gotask/Taskfile-exec.yml" /bin/true

export NO_COLOR=1
home=$WORK/home
rm -rf "$home" # a fresh store: the done sessions below are made anew
trun() { TEAMRUN_HOME=$home "$teamrun" "$@" >/dev/null; }

# A fully done session of each size, for the restore and plan figures.
trun run "$WORK/cmd/team.yaml" --quiet --session done1k
if [ "$BIG" = 1 ]; then trun run "$WORK/big/team.yaml" --quiet --session done10k; fi

declare -A S # name -> space-separated samples
add() { S[$1]="${S[$1]:-} $2"; }
# failed STATUS CMD…: a contender that fails is not timed; its figure
# would be that of an error. (A command inside $(…) does not stop the
# script under set -e, so the sampling below runs in the script's shell.)
failed() {
	local status=$1
	shift
	echo "compare.sh: exit status $status from: $*" >&2
	exit 1
}
# ms NAME CMD…: adds to NAME the wall time of CMD in milliseconds
# (fractional). The clock is bash's own EPOCHREALTIME, read without
# starting a process, so that the figure holds only CMD (a `date` on each
# side added a process start to every sample, which flattered the
# start-up ratios).
ms() {
	local name=$1 t0 t1
	shift
	t0=$EPOCHREALTIME
	"$@" >/dev/null || failed $? "$@"
	t1=$EPOCHREALTIME
	add "$name" "$(echo "scale=3; (${t1/[.,]/} - ${t0/[.,]/}) / 1000" | bc)"
}
# untimed CMD…: runs CMD as ms does, and adds no sample.
untimed() { "$@" >/dev/null || failed $? "$@"; }
# rss NAME CMD…: adds to NAME the peak RSS of CMD in KiB.
rss() {
	local name=$1 out
	shift
	out=$(TEAMRUN_HOME=$home "$bin/floor" rss "$@") || failed $? "$@"
	add "$name" "$(tail -1 <<<"$out")"
}
# faults NAME CMD…: adds to NAME the page faults CMD took. On a virtual
# machine a first touch of a page can cost 5-11 µs, and a start's time
# follows its faults (bench/RESULTS.md, session 29).
faults() {
	local name=$1 out
	shift
	out=$(TEAMRUN_HOME=$home "$bin/floor" faults "$@") || failed $? "$@"
	add "$name" "$(tail -1 <<<"$out")"
}
# samples NAME: NAME's samples, one a line, in the order of the rounds.
samples() { tr -s ' ' '\n' <<<"${S[$1]}" | sed '/^$/d'; }

for ((r = 1; r <= ROUNDS; r++)); do
	echo "round $r/$ROUNDS ..." >&2
	if [ "${ONLY:-}" != restore ]; then
	ms floor_direct "$bin/floor" direct $N "$WORK"
	ms cmd_cold trun run "$WORK/cmd/team.yaml" --quiet --session "cmd-$r"
	ms floor_sh "$bin/floor" sh $N "$WORK"
	ms sh_cold trun run "$WORK/sh/team.yaml" --quiet --session "sh-$r"
	ms gotask "$bin/task" --silent --taskfile "$WORK/gotask/Taskfile.yml"
	ms gotask_exec "$bin/task" --silent --taskfile "$WORK/gotask/Taskfile-exec.yml"
	ms wf_p1 trun run "$WORK/wf/team.yaml" --quiet --max-parallel 1 --session "wf1-$r"
	ms wf_p8 trun run "$WORK/wf/team.yaml" --quiet --max-parallel 8 --session "wf8-$r"
	ms floor_direct8 "$bin/floor" direct $N "$WORK" 8
	if [ -n "${BASELINE:-}" ]; then
		ms base_cmd_cold env TEAMRUN_HOME="$home" "$BASELINE" run "$WORK/cmd/team.yaml" --quiet --session "bcmd-$r"
		ms base_wf_p1 env TEAMRUN_HOME="$home" "$BASELINE" run "$WORK/wf/team.yaml" --quiet --max-parallel 1 --session "bwf1-$r"
		ms base_wf_p8 env TEAMRUN_HOME="$home" "$BASELINE" run "$WORK/wf/team.yaml" --quiet --max-parallel 8 --session "bwf8-$r"
	fi
	fi
	# The first restore after the cold runs reads slower, whichever build
	# runs it (a restored 10,000-task rerun: 125-134 ms first, 76-100 ms
	# next, either build first; a sync before it changed nothing), and it
	# was always teamrun's: an untimed restore takes that place.
	untimed trun run "$WORK/cmd/team.yaml" --quiet --continue --session done1k
	ms restored1k trun run "$WORK/cmd/team.yaml" --quiet --continue --session done1k
	ms plan1k trun plan "$WORK/cmd/team.yaml" --session done1k
	if [ -n "${BASELINE:-}" ]; then
		ms base_restored1k env TEAMRUN_HOME="$home" "$BASELINE" run "$WORK/cmd/team.yaml" --quiet --continue --session done1k
		ms base_plan1k env TEAMRUN_HOME="$home" "$BASELINE" plan "$WORK/cmd/team.yaml" --session done1k
	fi
	ms hello "$bin/hello"
	ms version "$teamrun" --version
	faults faults_hello "$bin/hello"
	faults faults_version "$teamrun" --version
	faults faults_restored1k "$teamrun" run "$WORK/cmd/team.yaml" --quiet --continue --session done1k
	if [ "${ONLY:-}" != restore ]; then
		ms deps "$bin/deps"
		ms depslean "$bin/depslean"
	fi
	ms validate10 "$teamrun" validate "$WORK/v/team.yaml"
	if [ "$BIG" = 1 ]; then
		if [ "${ONLY:-}" != restore ]; then
			ms big_cold trun run "$WORK/big/team.yaml" --quiet --session "big-$r"
			rss rss10k "$teamrun" run "$WORK/big/team.yaml" --quiet --session "rss-$r"
		fi
		untimed trun run "$WORK/big/team.yaml" --quiet --continue --session done10k
		ms restored10k trun run "$WORK/big/team.yaml" --quiet --continue --session done10k
		rss rss10k_restore "$teamrun" run "$WORK/big/team.yaml" --quiet --continue --session done10k
		if [ -n "${BASELINE:-}" ]; then
			ms base_restored10k env TEAMRUN_HOME="$home" "$BASELINE" run "$WORK/big/team.yaml" --quiet --continue --session done10k
			rss base_rss10k_restore "$BASELINE" run "$WORK/big/team.yaml" --quiet --continue --session done10k
		fi
	fi
	# Each round's sessions are deleted so the store stays the same size.
	rm -rf "$home"/sessions/{cmd,sh,wf1,wf8,big,rss,bcmd,bwf1,bwf8}-"$r".*
done

m() { samples "$1" | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { echo "scale=3; $(m "$1") / $(m "$2")" | bc; }
# spread A B: the lowest and highest of the rounds' own ratios A/B (both
# ran in the same round, under the same load): how far one machine moves
# within this run, beside the ratio of the medians above.
spread() {
	paste <(samples "$1") <(samples "$2") |
		awk 'NR == 1 || $1 / $2 < lo { lo = $1 / $2 } NR == 1 || $1 / $2 > hi { hi = $1 / $2 } END { printf "%.3f to %.3f\n", lo, hi }'
}
printf '\nmedians of %d interleaved rounds (ms unless stated)\n' "$ROUNDS"
if [ "${ONLY:-}" = restore ]; then
	printf '%-64s %s\n' \
		"fully restored 1,000-task rerun, ms" "$(m restored1k)" \
		"plan of that session, ms" "$(m plan1k)"
	if [ "$BIG" = 1 ]; then
		printf '%-64s %s\n' \
			"fully restored 10,000-task rerun, ms" "$(m restored10k)" \
			"peak RSS, its full restore, MiB" "$(echo "scale=1; $(m rss10k_restore) / 1024" | bc)"
	fi
	if [ -n "${BASELINE:-}" ]; then
		printf '%-64s %s\n' \
			"baseline: fully restored 1,000-task rerun, ms" "$(m base_restored1k)" \
			"baseline: plan of that session, ms" "$(m base_plan1k)"
		if [ "$BIG" = 1 ]; then
			printf '%-64s %s\n' \
				"baseline: fully restored 10,000-task rerun, ms" "$(m base_restored10k)" \
				"baseline: peak RSS, its full restore, MiB" "$(echo "scale=1; $(m base_rss10k_restore) / 1024" | bc)"
		fi
	fi
	exit 0
fi
printf '%-64s %s\n' \
	"1,000 command: [true] cold / direct floor ($(m cmd_cold) / $(m floor_direct))" "$(ratio cmd_cold floor_direct)" \
	"1,000 shell: \"true\" cold / sh -c true floor ($(m sh_cold) / $(m floor_sh))" "$(ratio sh_cold floor_sh)" \
	"1,000 cold / go-task 1,000 true ($(m cmd_cold) / $(m gotask))" "$(ratio cmd_cold gotask)" \
	"  the direct floor itself / go-task (its true starts no process)" "$(ratio floor_direct gotask)" \
	"1,000 cold / go-task 1,000 /bin/true, a process each ($(m gotask_exec))" "$(ratio cmd_cold gotask_exec)" \
	"workflow 1,000 --max-parallel 8 / 1 ($(m wf_p8) / $(m wf_p1))" "$(ratio wf_p8 wf_p1)" \
	"  the direct floor, 8 at once / one at a time ($(m floor_direct8))" "$(ratio floor_direct8 floor_direct)" \
	"fully restored 1,000-task rerun, ms" "$(m restored1k)" \
	"plan of that session, ms" "$(m plan1k)" \
	"teamrun --version / Go hello-world ($(m version) / $(m hello))" "$(ratio version hello)" \
	"  hello-world linking teamrun's libraries / hello-world ($(m deps))" "$(ratio deps hello)" \
	"  the same without jsonschema/v5 and urfave/cli ($(m depslean))" "$(ratio depslean hello)" \
	"validate 10-task spec / Go hello-world ($(m validate10) / $(m hello))" "$(ratio validate10 hello)" \
	"page faults: --version / hello-world ($(m faults_version) / $(m faults_hello))" "$(ratio faults_version faults_hello)" \
	"page faults: fully restored 1,000-task rerun" "$(m faults_restored1k)"
if [ -n "${BASELINE:-}" ]; then
	printf '%-64s %s\n' \
		"baseline: 1,000 cold / direct floor ($(m base_cmd_cold) / $(m floor_direct))" "$(ratio base_cmd_cold floor_direct)" \
		"baseline: workflow --max-parallel 8 / 1 ($(m base_wf_p8) / $(m base_wf_p1))" "$(ratio base_wf_p8 base_wf_p1)" \
		"this build's 1,000 cold / the baseline's" "$(ratio cmd_cold base_cmd_cold)" \
		"baseline: fully restored 1,000-task rerun, ms" "$(m base_restored1k)" \
		"baseline: plan of that session, ms" "$(m base_plan1k)"
	if [ "$BIG" = 1 ]; then
		printf '%-64s %s\n' \
			"baseline: fully restored 10,000-task rerun, ms" "$(m base_restored10k)" \
			"baseline: peak RSS, its full restore, MiB" "$(echo "scale=1; $(m base_rss10k_restore) / 1024" | bc)"
	fi
fi
if [ "$BIG" = 1 ]; then
	printf '%-64s %s\n' \
		"fully restored 10,000-task rerun, ms" "$(m restored10k)" \
		"per-task cost cold, 10,000 / 1,000 ($(m big_cold) / $(m cmd_cold))" "$(echo "scale=3; $(m big_cold) / $NBIG / ($(m cmd_cold) / $N)" | bc)" \
		"peak RSS, 10,000-task run, MiB" "$(echo "scale=1; $(m rss10k) / 1024" | bc)" \
		"peak RSS, its full restore, MiB" "$(echo "scale=1; $(m rss10k_restore) / 1024" | bc)"
fi
printf '\nthe same ratios round by round, lowest to highest\n'
printf '%-64s %s\n' \
	"1,000 command: [true] cold / direct floor" "$(spread cmd_cold floor_direct)" \
	"1,000 shell: \"true\" cold / sh -c true floor" "$(spread sh_cold floor_sh)" \
	"1,000 cold / go-task 1,000 /bin/true" "$(spread cmd_cold gotask_exec)" \
	"workflow 1,000 --max-parallel 8 / 1" "$(spread wf_p8 wf_p1)" \
	"the direct floor, 8 at once / one at a time" "$(spread floor_direct8 floor_direct)" \
	"teamrun --version / Go hello-world" "$(spread version hello)"
