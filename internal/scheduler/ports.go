package scheduler

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/strata-dev/strata/api"
)

// Ports are a node resource held in the node's detail (nodeDetail.ports,
// a sorted list of the ports its live allocations hold): a static port is
// free or not, dynamic ports are drawn from the node's dynamic range
// (api.Node.DynamicPortRange: its own, or api.DynamicPortMin to
// api.DynamicPortMax), lowest free first, so a plan stays a pure function
// of its inputs.

// reasonNoDynamicPort rejects a node whose dynamic range r is full.
func reasonNoDynamicPort(r api.PortRange) string {
	return "no free port in the dynamic range " + r.String()
}

// portInUse is the reason a static port does not fit.
func portInUse(p int) string { return "port " + strconv.Itoa(p) + " already in use" }

// portFilter requires every static port of the group to be free on the
// node and enough free ports in the dynamic range for its dynamic ones.
type portFilter struct{}

func (portFilter) name() string    { return "ports" }
func (portFilter) kind() stageKind { return kindCapacity }
func (portFilter) key(g *group) string {
	return fmt.Sprintf("ports %v", g.tg.Ports)
}

func (portFilter) check(g *group, c *cell, n *nodeState, i int) string {
	d := c.detailOf(n, i)
	dynamic := 0
	for _, p := range g.tg.Ports {
		if p.Static == 0 {
			dynamic++
		} else if d.portTaken(p.Static) {
			return portInUse(p.Static)
		}
	}
	if dynamic > 0 && len(d.freeDynamicPorts(g.tg.Ports, dynamic)) < dynamic {
		return reasonNoDynamicPort(d.node.DynamicPortRange())
	}
	return ""
}

// portTaken reports whether a live allocation of the node holds port p.
func (d *nodeDetail) portTaken(p int) bool {
	_, found := slices.BinarySearch(d.ports, uint16(p))
	return found
}

// freeDynamicPorts returns up to want free ports of the dynamic range,
// lowest first, skipping the static ports of req (which one allocation
// holds together with its dynamic ones).
//
// Ports of allocations the plan stops (lingering) come last: their tasks
// may still listen on them for a shutdown delay, and a replacement that
// took one would fail to bind (or, worse, its check would reach the old
// task and pass).
func (d *nodeDetail) freeDynamicPorts(req []api.PortRequest, want int) []int {
	out := make([]int, 0, want)
	var lingering []int
	r := d.node.DynamicPortRange()
	k, _ := slices.BinarySearch(d.ports, uint16(r.Min))
	for p := r.Min; p <= r.Max && len(out) < want; p++ {
		for k < len(d.ports) && int(d.ports[k]) < p {
			k++
		}
		if k < len(d.ports) && int(d.ports[k]) == p {
			continue
		}
		if slices.ContainsFunc(req, func(r api.PortRequest) bool { return r.Static == p }) {
			continue
		}
		if _, held := slices.BinarySearch(d.lingering, uint16(p)); held {
			lingering = append(lingering, p)
			continue
		}
		out = append(out, p)
	}
	for _, p := range lingering {
		if len(out) == want {
			break
		}
		out = append(out, p)
	}
	return out
}

// linger notes the ports of an allocation the plan stops (lingering).
func (d *nodeDetail) linger(a *api.Allocation) {
	for _, p := range a.Assignment.Ports {
		if p.Port < 1 || p.Port > 65535 {
			continue
		}
		if k, found := slices.BinarySearch(d.lingering, uint16(p.Port)); !found {
			d.lingering = slices.Insert(d.lingering, k, uint16(p.Port))
		}
	}
}

// assignPorts names the group's ports on a node the port filter accepted:
// static ones as asked, dynamic ones the lowest free of the range.
func assignPorts(g *group, d *nodeDetail) []api.AssignedPort {
	if len(g.tg.Ports) == 0 {
		return nil
	}
	dynamic := 0
	for _, p := range g.tg.Ports {
		if p.Static == 0 {
			dynamic++
		}
	}
	free := d.freeDynamicPorts(g.tg.Ports, dynamic)
	out := make([]api.AssignedPort, 0, len(g.tg.Ports))
	for _, p := range g.tg.Ports {
		port := p.Static
		if port == 0 {
			port, free = free[0], free[1:]
		}
		out = append(out, api.AssignedPort{Name: p.Name, Port: port})
	}
	return out
}

// applyPorts marks an allocation's ports taken, noting the first port
// outside 1-65535 or already held.
func (d *nodeDetail) applyPorts(a *api.Allocation, note func(string, ...any)) {
	for _, p := range a.Assignment.Ports {
		if p.Port < 1 || p.Port > 65535 {
			note("port %d out of range", p.Port)
			continue
		}
		k, found := slices.BinarySearch(d.ports, uint16(p.Port))
		if found {
			note("port %d assigned twice", p.Port)
			continue
		}
		d.ports = slices.Insert(d.ports, k, uint16(p.Port))
	}
}

// releasePorts undoes applyPorts.
func (d *nodeDetail) releasePorts(a *api.Allocation) {
	for _, p := range a.Assignment.Ports {
		if k, found := slices.BinarySearch(d.ports, uint16(p.Port)); found && p.Port >= 1 && p.Port <= 65535 {
			d.ports = slices.Delete(d.ports, k, k+1)
		}
	}
}

// portsMismatch reports an allocation whose ports are not those its
// group asks for: one per request, in order, static ones exact, dynamic
// ones inside the node's dynamic range r.
func portsMismatch(a *api.Allocation, r api.PortRange) string {
	var want []api.PortRequest
	if a.TaskGroup != nil {
		want = a.TaskGroup.Ports
	}
	got := a.Assignment.Ports
	if len(got) != len(want) {
		return fmt.Sprintf("assigned %d ports, want %d", len(got), len(want))
	}
	for k, req := range want {
		p := got[k]
		switch {
		case p.Name != req.Name:
			return fmt.Sprintf("port %d is named %q, want %q", k, p.Name, req.Name)
		case req.Static != 0 && p.Port != req.Static:
			return fmt.Sprintf("port %s is %d, want static %d", req.Name, p.Port, req.Static)
		case req.Static == 0 && (p.Port < r.Min || p.Port > r.Max):
			return fmt.Sprintf("dynamic port %s is %d, outside %s", req.Name, p.Port, r)
		}
	}
	return ""
}
