package scheduler

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/strata-dev/strata/api"
)

// Ports are a node resource held in the node's detail (nodeDetail.ports,
// a sorted list of the ports its live allocations hold): a static port is
// free or not, dynamic ports are drawn from api.DynamicPortMin to
// api.DynamicPortMax, lowest free first, so a plan stays a pure function
// of its inputs.

// reasonNoDynamicPort rejects a node whose dynamic range is full.
var reasonNoDynamicPort = fmt.Sprintf("no free port in the dynamic range %d-%d", api.DynamicPortMin, api.DynamicPortMax)

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
		return reasonNoDynamicPort
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
func (d *nodeDetail) freeDynamicPorts(req []api.PortRequest, want int) []int {
	out := make([]int, 0, want)
	k, _ := slices.BinarySearch(d.ports, uint16(api.DynamicPortMin))
	for p := api.DynamicPortMin; p <= api.DynamicPortMax && len(out) < want; p++ {
		for k < len(d.ports) && int(d.ports[k]) < p {
			k++
		}
		if k < len(d.ports) && int(d.ports[k]) == p {
			continue
		}
		if slices.ContainsFunc(req, func(r api.PortRequest) bool { return r.Static == p }) {
			continue
		}
		out = append(out, p)
	}
	return out
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
// ones inside the dynamic range.
func portsMismatch(a *api.Allocation) string {
	var req []api.PortRequest
	if a.TaskGroup != nil {
		req = a.TaskGroup.Ports
	}
	got := a.Assignment.Ports
	if len(got) != len(req) {
		return fmt.Sprintf("assigned %d ports, want %d", len(got), len(req))
	}
	for k, r := range req {
		p := got[k]
		switch {
		case p.Name != r.Name:
			return fmt.Sprintf("port %d is named %q, want %q", k, p.Name, r.Name)
		case r.Static != 0 && p.Port != r.Static:
			return fmt.Sprintf("port %s is %d, want static %d", r.Name, p.Port, r.Static)
		case r.Static == 0 && (p.Port < api.DynamicPortMin || p.Port > api.DynamicPortMax):
			return fmt.Sprintf("dynamic port %s is %d, outside %d-%d", r.Name, p.Port, api.DynamicPortMin, api.DynamicPortMax)
		}
	}
	return ""
}
