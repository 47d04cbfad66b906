package scheduler

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/api"
)

// deviceReq is one device request of a group (api.DeviceRequest), with
// the reason a node that cannot serve it gets.
type deviceReq struct {
	api.DeviceRequest
	text string // "no 2 free devices of class fpga with model=u250"
}

// compileDevices lists the device requests of the group's tasks in task
// order: each task gets devices of its own, so two tasks asking for one
// fpga each need two.
func compileDevices(tg *api.TaskGroup) []deviceReq {
	var out []deviceReq
	for _, t := range tg.Tasks {
		for _, r := range t.Devices {
			out = append(out, deviceReq{DeviceRequest: r, text: deviceText(&r)})
		}
	}
	return out
}

func deviceText(r *api.DeviceRequest) string {
	var sb strings.Builder
	sb.WriteString("no ")
	sb.WriteString(strconv.Itoa(r.Count))
	if r.Count == 1 {
		sb.WriteString(" free device of class ")
	} else {
		sb.WriteString(" free devices of class ")
	}
	sb.WriteString(r.Class)
	if len(r.Attributes) > 0 {
		sb.WriteString(" with ")
		sb.WriteString(attributesText(r.Attributes))
	}
	if r.NUMALocal {
		sb.WriteString(" on the cores' NUMA node")
	}
	return sb.String()
}

// attributesText is "k1=v1,k2=v2", sorted by key.
func attributesText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return strings.Join(keys, ",")
}

// devicesNUMALocal reports whether a request of the group must sit on
// the NUMA node of its pinned cores.
func (g *group) devicesNUMALocal() bool {
	return slices.ContainsFunc(g.devices, func(r deviceReq) bool { return r.NUMALocal })
}

// deviceFilter requires free devices for every device request of the
// group, the requests served one after another so that no device serves
// two. A request with numaLocal is judged on the NUMA node the group's
// cores will be pinned on (numaFits already wants one with them).
type deviceFilter struct{}

func (deviceFilter) name() string    { return "devices" }
func (deviceFilter) kind() stageKind { return kindCapacity }
func (deviceFilter) key(g *group) string {
	// With pinned cores the devices are judged on the NUMA node pickNUMA
	// chooses, which reads the cores, the memory and the GPU request too.
	return fmt.Sprintf("%s cores %d %d gpu %d %d %v %q", devicesKey(g), g.cores, g.req.Resources.MemoryBytes,
		g.gpus, g.gpuMilli, g.anyModel, g.modelLists)
}

// devicesKey names the group's device requests.
func devicesKey(g *group) string {
	var sb strings.Builder
	sb.WriteString("devices")
	for _, r := range g.devices {
		fmt.Fprintf(&sb, " %s %d %v %q;", r.Class, r.Count, r.NUMALocal, attributesText(r.Attributes))
	}
	return sb.String()
}

func (deviceFilter) check(g *group, c *cell, n *nodeState, i int) string {
	d := c.detailOf(n, i)
	numaID := -1
	if g.cores > 0 {
		if nu := pickNUMA(g, d); nu >= 0 {
			numaID = d.node.NUMA[nu].ID
		}
	}
	_, reason := pickDevices(g, d, numaID)
	return reason
}

// pickDevices chooses the devices of node d for the group's requests:
// free devices of the class with every attribute asked, those on NUMA
// node numaID first (only those for a numaLocal request). It returns the
// chosen device indexes in the order of the requests, or the reason of
// the first request it cannot serve. Requests with more attributes
// choose first, so a request for "any fpga" does not take the only
// u250 a later request needs.
func pickDevices(g *group, d *nodeDetail, numaID int) ([]int, string) {
	if len(g.devices) == 0 {
		return nil, ""
	}
	devs := d.node.Devices
	taken := slices.Clone(d.devTaken)
	order := make([]int, len(g.devices))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return len(g.devices[b].Attributes) - len(g.devices[a].Attributes)
	})
	chosen := make([][]int, len(g.devices))
	for _, k := range order {
		r := &g.devices[k]
		for pass := 0; pass < 2 && len(chosen[k]) < r.Count; pass++ {
			if pass == 1 && r.NUMALocal {
				break
			}
			for j := range devs {
				local := numaID >= 0 && devs[j].NUMA == numaID
				if (pass == 0) != local || taken[j] || !r.Matches(&devs[j]) {
					continue
				}
				taken[j] = true
				chosen[k] = append(chosen[k], j)
				if len(chosen[k]) == r.Count {
					break
				}
			}
		}
		if len(chosen[k]) < r.Count {
			return nil, r.text
		}
	}
	var out []int
	for _, c := range chosen {
		out = append(out, c...)
	}
	return out, ""
}

// devicesFitOn reports whether NUMA node numaID holds free devices for
// every numaLocal request of the group (and the rest anywhere).
func devicesFitOn(g *group, d *nodeDetail, numaID int) bool {
	_, reason := pickDevices(g, d, numaID)
	return reason == ""
}

// assignDevices names the devices for one replica on node d.
func assignDevices(g *group, d *nodeDetail, numaID int) []string {
	idx, _ := pickDevices(g, d, numaID)
	if len(idx) == 0 {
		return nil
	}
	out := make([]string, len(idx))
	for k, j := range idx {
		out[k] = d.node.Devices[j].ID
	}
	return out
}

func (d *nodeDetail) deviceIndex(id string) int {
	for i := range d.node.Devices {
		if d.node.Devices[i].ID == id {
			return i
		}
	}
	return -1
}

// applyDevices marks an allocation's devices taken, noting a device that
// is not on the node or already taken.
func (d *nodeDetail) applyDevices(a *api.Allocation, note func(string, ...any)) {
	for _, id := range a.Assignment.Devices {
		switch k := d.deviceIndex(id); {
		case k < 0:
			note("device %s not on node", id)
		case d.devTaken[k]:
			note("device %s assigned twice", id)
		default:
			d.devTaken[k] = true
		}
	}
}

// releaseDevices undoes applyDevices.
func (d *nodeDetail) releaseDevices(a *api.Allocation) {
	for _, id := range a.Assignment.Devices {
		if k := d.deviceIndex(id); k >= 0 {
			d.devTaken[k] = false
		}
	}
}

// devicesMismatch reports an assignment whose devices do not serve the
// group's requests: as many as asked, each of the class and attributes
// of its request, in the order of the requests.
func devicesMismatch(a *api.Allocation, node *api.Node) string {
	var reqs []api.DeviceRequest
	if a.TaskGroup != nil {
		for _, t := range a.TaskGroup.Tasks {
			reqs = append(reqs, t.Devices...)
		}
	}
	want := 0
	for _, r := range reqs {
		want += r.Count
	}
	if len(a.Assignment.Devices) != want {
		return fmt.Sprintf("assigned %d devices, want %d", len(a.Assignment.Devices), want)
	}
	k := 0
	for _, r := range reqs {
		for range r.Count {
			id := a.Assignment.Devices[k]
			k++
			j := slices.IndexFunc(node.Devices, func(dv api.Device) bool { return dv.ID == id })
			if j < 0 {
				return "device " + id + " not on node"
			}
			if !r.Matches(&node.Devices[j]) {
				return fmt.Sprintf("device %s is not a %s with %s", id, r.Class, attributesText(r.Attributes))
			}
		}
	}
	return ""
}
