# Sourced by the shell benchmarks. kernel.bpf_stats_enabled is global and
# others on a shared machine may have it on: put back what was found, not 0.
BPF_STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
bpf_stats_on() { sysctl -q kernel.bpf_stats_enabled=1; }
bpf_stats_restore() { sysctl -q kernel.bpf_stats_enabled="$BPF_STATS_WAS"; }
