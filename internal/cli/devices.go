package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/strata-dev/strata/api"
)

// devicesSummary counts a node's devices by class, in the order the
// classes first appear: "fpga:2,nic-vf:8"; "-" for none. -o json lists
// each with its id, NUMA node, attributes and device nodes.
func devicesSummary(n *api.Node) string {
	if len(n.Devices) == 0 {
		return "-"
	}
	var classes []string
	count := map[string]int{}
	for _, d := range n.Devices {
		if count[d.Class] == 0 {
			classes = append(classes, d.Class)
		}
		count[d.Class]++
	}
	parts := make([]string, len(classes))
	for i, c := range classes {
		parts[i] = fmt.Sprintf("%s:%d", c, count[c])
	}
	return strings.Join(parts, ",")
}

// printHardware shows an allocation's pinned cores, GPUs and devices,
// when it has any.
func printHardware(w io.Writer, asg *api.Assignment) {
	if len(asg.CPUs) > 0 {
		fmt.Fprintf(w, "Cores:     %s (NUMA node %d)\n", strings.Trim(fmt.Sprint(asg.CPUs), "[]"), asg.NUMANode)
	}
	if len(asg.GPUs) > 0 {
		gpus := strings.Join(asg.GPUs, ",")
		if asg.GPUMilli > 0 {
			gpus += fmt.Sprintf(" (%d milli)", asg.GPUMilli)
		}
		fmt.Fprintf(w, "GPUs:      %s\n", gpus)
	}
	if len(asg.Devices) > 0 {
		fmt.Fprintf(w, "Devices:   %s\n", strings.Join(asg.Devices, ","))
	}
}
