# Helpers the benchmark scripts share; source it: . "$(dirname "$0")/lib.sh"

# count_node_downs FILE...: how many nodes the servers marked down, from
# their logs (text format): the "node down" lines only. The heartbeat
# guard's warning "... deferring node downs" names no node and must not
# count (a plain grep "node down" counted it: 33 for 32).
count_node_downs() {
	cat "$@" | grep -c 'msg="node down"' || true
}
