package agent

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/fingerprint"
)

// deviceNodes knows the device nodes of the node's GPUs and other
// devices, by id: what a task is given, and what it is denied
// (docs/devices.md). It is set once by fingerprint and only read after.
type deviceNodes struct {
	gpus    map[string]string   // GPU id → /dev/nvidiaN
	devices map[string][]string // device id → its device nodes
}

func newDeviceNodes(n *api.Node, devRoot, procRoot string) deviceNodes {
	dn := deviceNodes{gpus: fingerprint.GPUDeviceNodes(n.GPUs, devRoot, procRoot)}
	for _, d := range n.Devices {
		if len(d.Paths) > 0 {
			if dn.devices == nil {
				dn.devices = map[string][]string{}
			}
			dn.devices[d.ID] = d.Paths
		}
	}
	return dn
}

// taskDevices splits the allocation's devices among its tasks: each task
// takes, in order, as many as its requests count (the scheduler assigns
// them in the order of the tasks' requests).
func taskDevices(alloc *api.Allocation) map[string][]string {
	out := map[string][]string{}
	k := 0
	for _, t := range alloc.TaskGroup.Tasks {
		for _, r := range t.Devices {
			for range r.Count {
				if k < len(alloc.Assignment.Devices) {
					out[t.Name] = append(out[t.Name], alloc.Assignment.Devices[k])
				}
				k++
			}
		}
	}
	return out
}

// forTask returns the device nodes a task is given (the allocation's GPUs
// and its own devices) and those it is denied (every other GPU and
// device of the node). A node shared by a given and a denied device
// stays given.
func (dn deviceNodes) forTask(gpus, devices []string) (given, denied []string) {
	for id, p := range dn.gpus {
		if slices.Contains(gpus, id) {
			given = append(given, p)
		} else {
			denied = append(denied, p)
		}
	}
	for id, paths := range dn.devices {
		if slices.Contains(devices, id) {
			given = append(given, paths...)
		} else {
			denied = append(denied, paths...)
		}
	}
	slices.Sort(given)
	given = slices.Compact(given)
	slices.Sort(denied)
	denied = slices.Compact(denied)
	denied = slices.DeleteFunc(denied, func(p string) bool { return slices.Contains(given, p) })
	return given, denied
}

// present reports a device of ids whose device nodes are gone from the
// host (unplugged, its driver unloaded): the task must not start as if
// it had it.
func (dn deviceNodes) present(ids []string) error {
	for _, id := range ids {
		for _, p := range dn.devices[id] {
			if _, err := os.Stat(p); err != nil {
				return fmt.Errorf("device %s is gone: %w", id, err)
			}
		}
	}
	return nil
}

// deviceEnv tells a task its devices: STRATA_DEVICES_<CLASS> lists the
// ids of its devices of that class ("nic-vf" → STRATA_DEVICES_NIC_VF).
func deviceEnv(env map[string]string, node *api.Node, ids []string) {
	for _, id := range ids {
		i := slices.IndexFunc(node.Devices, func(d api.Device) bool { return d.ID == id })
		if i < 0 {
			continue
		}
		key := "STRATA_DEVICES_" + strings.ToUpper(strings.ReplaceAll(node.Devices[i].Class, "-", "_"))
		if env[key] != "" {
			env[key] += ","
		}
		env[key] += id
	}
}

// devicesHook refuses a start while a device of the task is gone from the
// host (a prestart hook): the task must not start as if it had it; the
// restart policy tries again.
type devicesHook struct {
	nodes deviceNodes
	ids   []string
}

func (h devicesHook) prestart(context.Context, *drivers.TaskConfig, <-chan struct{}) error {
	return h.nodes.present(h.ids)
}
