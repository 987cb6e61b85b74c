#!/usr/bin/env bash
# distill in cluster mode on this machine, as make cluster-up and
# make cluster-down run it: NATS with JetStream, the fetcher, extractor and
# renderer, and the gateway, each its own process on loopback at the
# default addresses, which every process also uses when its flag is absent
# (so none is given here). Pids, logs, NATS's store and the session key
# live in the state directory.
#
#   deploy/local/cluster.sh up|down      BIN=dir of the binaries, STATE=state dir
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${BIN:-$root/bin}
state=${STATE:-$root/.cluster}
# Started in this order, stopped in the reverse one.
procs=(nats-server extractor renderer fetcher distill)
gateway=127.0.0.1:7000

die() { echo "cluster: $*" >&2; exit 1; }

# alive NAME: its pid file names a running process of our binary (a pid
# reused by another program does not count).
alive() {
	local pid
	pid=$(cat "$state/$1.pid" 2>/dev/null) || return 1
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 1
	[[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$bin/$1"* ]]
}

start() {
	local name=$1; shift
	# setsid: a Ctrl-C in the terminal that ran make does not reach them.
	setsid "$bin/$name" "$@" >"$state/$name.log" 2>&1 </dev/null &
	echo $! >"$state/$name.pid"
}

# await NAME PATTERN: the process's log shows PATTERN within a minute.
await() {
	local name=$1 pattern=$2
	for _ in $(seq 600); do
		grep -qE "$pattern" "$state/$name.log" && return 0
		alive "$name" || { tail -n 20 "$state/$name.log" >&2; die "$name exited; its log is $state/$name.log"; }
		sleep 0.1
	done
	tail -n 20 "$state/$name.log" >&2
	die "$name not ready after a minute; its log is $state/$name.log"
}

up() {
	for p in "${procs[@]}"; do
		[[ -x $bin/$p ]] || die "$bin/$p is missing: run make cluster-up, which builds it"
		! alive "$p" || die "$p is already running (pid $(cat "$state/$p.pid")): make cluster-down first"
	done
	mkdir -p "$state/nats"
	# One key for the gateway's sessions, kept across restarts so that
	# sessions stored in NATS stay readable.
	if [[ ! -s $state/session-key ]]; then
		(umask 077 && head -c 32 /dev/urandom | base64 >"$state/session-key")
	fi
	# Whatever fails from here on, nothing is left running.
	trap 'echo "cluster: stopping what started" >&2; down >&2' EXIT

	start nats-server -a 127.0.0.1 -p 4222 -js -sd "$state/nats"
	await nats-server 'Server is ready'
	start extractor
	start renderer
	start fetcher
	DISTILL_SESSION_KEY=$(cat "$state/session-key") start distill serve --cluster
	await extractor '"msg":"grpc serving"'
	await renderer '"msg":"grpc serving"'
	await fetcher '"msg":"ready"'
	await distill 'msg=ready'
	trap - EXIT

	cat <<-MSG
	distill is up in cluster mode (logs and pids in $state):
	  NATS       nats://127.0.0.1:4222, JetStream in $state/nats
	  fetcher    127.0.0.1:7001
	  extractor  127.0.0.1:7002
	  renderer   127.0.0.1:7003
	  gateway    $gateway (distill serve --cluster)
	Try:  bin/distill fetch --server $gateway https://example.com/
	Stop: make cluster-down
	MSG
}

down() {
	local stopped=()
	for ((i = ${#procs[@]} - 1; i >= 0; i--)); do
		local p=${procs[i]}
		if alive "$p"; then
			local pid
			pid=$(cat "$state/$p.pid")
			kill -TERM "$pid"
			# Up to 30 s to finish what is in flight, as in a pod.
			for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			if kill -0 "$pid" 2>/dev/null; then
				kill -KILL "$pid"
				echo "cluster: $p (pid $pid) did not stop on SIGTERM within 30s: killed" >&2
			fi
			stopped+=("$p")
		fi
		rm -f "$state/$p.pid"
	done
	if ((${#stopped[@]})); then
		echo "stopped ${stopped[*]}"
	else
		echo "no distill cluster was running"
	fi
}

case ${1:-} in
up) up ;;
down) down ;;
*) die "usage: $0 up|down" ;;
esac
