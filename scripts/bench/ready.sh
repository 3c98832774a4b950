# Sourced by the benchmark scripts.
#
# wait_ready WHAT PID FILE  until FILE (the tracer's stderr, or bpfload's
#                           stdout) says it is attached ("tracing" from
#                           ilock, "attached" from bpfload). Exits 1 with
#                           FILE's last lines if PID dies first or 60 s pass:
#                           a tracer that failed must not hang the run.
wait_ready() {
	_ready_n=0
	while ! grep -q 'attached\|tracing' "$3" 2>/dev/null; do
		if ! kill -0 "$2" 2>/dev/null || [ "$_ready_n" -ge 1200 ]; then
			# ilock's own error is one line; a crash or libbpf's log says more above it
			echo "$(basename "$0"): $1 did not start; the end of its output:" >&2
			tail -n 5 "$3" 2>/dev/null | sed 's/^/  /' >&2
			exit 1
		fi
		_ready_n=$((_ready_n + 1))
		sleep 0.05
	done
}
