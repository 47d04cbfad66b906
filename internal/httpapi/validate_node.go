package httpapi

import (
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fieldpath"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/resources"
	"github.com/strata-dev/strata/internal/spec"
)

// maxNodeDrivers bounds the task drivers one node may advertise.
const maxNodeDrivers = 32

func validateNode(n *api.Node) error {
	var f fieldErrors
	f.check("id", spec.CheckID(n.ID))
	f.check("name", spec.CheckID(n.Name))
	f.check("httpAddr", checkAgentAddr(n.HTTPAddr))
	f.check("diskPressure", checkText(n.DiskPressure, maxTextBytes))
	if c := n.Checkpoint; c != nil {
		f.check("checkpoint.tool", checkText(c.Tool, maxTextBytes))
		f.check("checkpoint.reason", checkText(c.Reason, maxTextBytes))
	}
	for _, k := range slices.Sorted(maps.Keys(n.Labels)) { // problems in a stable order
		v := n.Labels[k]
		p := fieldpath.Join("labels", k)
		if problem := spec.CheckLabelKey(k); problem != "" {
			f.add(p, "%s", problem)
			continue
		}
		f.check(p, spec.CheckLabelValue(v))
	}
	c := n.Capacity
	for _, v := range resources.OutOfRange(c) {
		f.add("capacity."+v.Field, "%s", v.Problem)
	}
	if c.CPUMilli == 0 {
		f.add("capacity.cpuMilli", "must be positive")
	}
	for _, d := range resources.HugePageDims {
		if v := d.Limit.Of(c); v%d.Size != 0 {
			f.add("capacity."+d.Limit.Field, "must be a whole number of %s pages, got %s", resources.FormatBytes(d.Size), resources.FormatBytes(v))
		}
	}
	for k, d := range api.Dimensions {
		if !d.Capacity && c.Get(k) != 0 {
			f.add("capacity."+d.Field, "must be 0: a node offers whole %ss, and shares are cut from them", strings.ToUpper(d.Share.Of))
		}
	}
	if r := n.DynamicPorts; r != nil {
		f.check("dynamicPorts", r.Problem())
	}
	validateNUMA(&f, n.NUMA)
	validateGPUs(&f, n.GPUs, c.GPUs)
	validateDevices(&f, n.Devices)
	if len(n.Drivers) > maxNodeDrivers {
		f.add("drivers", "%d drivers, more than %d", len(n.Drivers), maxNodeDrivers)
	} else {
		for i, d := range n.Drivers {
			f.check(fieldpath.Index("drivers", i), spec.CheckID(d))
		}
	}
	if len(n.AgentNotices) > maxAgentNotices {
		f.add("agentNotices", "%d notices, more than %d", len(n.AgentNotices), maxAgentNotices)
	}
	for i, text := range n.AgentNotices {
		f.check(fieldpath.Index("agentNotices", i), checkText(text, maxTextBytes))
	}
	if len(f) == 0 {
		return nil
	}
	return route.Invalid("invalid-node", f)
}

// checkAgentAddr accepts an empty address or an http(s) URL with a host:
// the server dials it to stream logs.
func checkAgentAddr(addr string) string {
	if addr == "" {
		return ""
	}
	if len(addr) > maxAddrBytes {
		return fmt.Sprintf("is %d bytes long, more than %d", len(addr), maxAddrBytes)
	}
	u, err := url.Parse(addr)
	switch {
	case err != nil:
		return fmt.Sprintf("not a URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("want an http:// or https:// URL, got scheme %q", u.Scheme)
	case u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return "want scheme://host:port and nothing else"
	}
	return ""
}

// checkAgentScheme refuses an agent address the server would dial in
// the clear while the cell runs TLS: logs are fetched from it, and other
// agents send it migration images, each expecting mutual TLS; over
// plaintext anyone on the path reads them, and the server's request
// becomes a blind request to whatever listens there.
func (s *API) checkAgentScheme(addr string) error {
	if !s.cfg.TLS || addr == "" || strings.HasPrefix(addr, "https://") {
		return nil
	}
	return route.FieldError("plaintext-agent-address", "httpAddr",
		"%s is plaintext, but this cell runs TLS: an agent of a TLS cell serves its API over TLS and registers an https:// address (give the agent --tls-ca, --tls-cert and --tls-key)", addr)
}

func validateNUMA(f *fieldErrors, numa []api.NUMANode) {
	if len(numa) > maxNUMANodes {
		f.add("numa", "%d NUMA nodes, more than %d", len(numa), maxNUMANodes)
		return
	}
	ids, cpus := map[int]bool{}, map[int]bool{}
	for i, nu := range numa {
		p := fieldpath.Index("numa", i)
		switch {
		case nu.ID < 0 || nu.ID >= maxNUMANodes:
			f.add(p+".id", "must be between 0 and %d, got %d", maxNUMANodes-1, nu.ID)
		case ids[nu.ID]:
			f.add(p+".id", "NUMA node %d listed twice", nu.ID)
		}
		ids[nu.ID] = true
		f.check(p+".memoryBytes", resources.MemoryLimit.Check(nu.MemoryBytes))
		if nu.Tier != "" && !api.AcceptsTier(api.MemoryTiers, nu.Tier) {
			f.add(p+".tier", "unknown memory tier %.64q (want %s, or empty for standard)", nu.Tier, api.MemoryTiers)
		}
		for j, cpu := range nu.CPUs {
			cp := fieldpath.Index(p+".cpus", j)
			switch {
			case cpu < 0 || cpu >= maxNodeCPUID:
				f.add(cp, "must be between 0 and %d, got %d", maxNodeCPUID-1, cpu)
			case cpus[cpu]:
				f.add(cp, "cpu %d listed twice", cpu)
			}
			cpus[cpu] = true
		}
	}
}

func validateGPUs(f *fieldErrors, gpus []api.GPU, capacity int64) {
	if len(gpus) > 0 && int64(len(gpus)) != capacity {
		f.add("gpus", "lists %d GPUs but capacity.gpus is %d", len(gpus), capacity)
	}
	seen := map[string]bool{}
	for i, g := range gpus {
		p := fieldpath.Index("gpus", i)
		switch {
		case g.ID == "":
			f.add(p+".id", "required")
		case checkText(g.ID, 128) != "":
			f.add(p+".id", "%s", checkText(g.ID, 128))
		case seen[g.ID]:
			f.add(p+".id", "GPU %q listed twice", g.ID)
		}
		seen[g.ID] = true
		f.check(p+".model", checkText(g.Model, 128))
		f.check(p+".memoryBytes", resources.MemoryLimit.Check(g.MemoryBytes))
		if g.NUMA < -1 || g.NUMA >= maxNUMANodes {
			f.add(p+".numa", "must be -1 (unknown) or a NUMA node id, got %d", g.NUMA)
		}
	}
}

// maxDevicePaths bounds the device nodes of one device.
const maxDevicePaths = 16

// validateDevices checks a node's devices (api.Device) as an agent
// registers them: bounded, each id once, a class tasks can ask for,
// label-syntax attributes, a NUMA node or -1, absolute device paths.
func validateDevices(f *fieldErrors, devices []api.Device) {
	if len(devices) > api.MaxDevicesPerNode {
		f.add("devices", "%d devices, more than %d", len(devices), api.MaxDevicesPerNode)
		return
	}
	seen := map[string]bool{}
	for i, d := range devices {
		p := fieldpath.Index("devices", i)
		switch {
		case d.ID == "":
			f.add(p+".id", "required")
		case checkText(d.ID, 128) != "":
			f.add(p+".id", "%s", checkText(d.ID, 128))
		case seen[d.ID]:
			f.add(p+".id", "device %q listed twice", d.ID)
		}
		seen[d.ID] = true
		f.check(p+".class", spec.CheckDeviceClass(d.Class))
		if d.NUMA < -1 || d.NUMA >= maxNUMANodes {
			f.add(p+".numa", "must be -1 (unknown) or a NUMA node id, got %d", d.NUMA)
		}
		if len(d.Attributes) > 64 {
			f.add(p+".attributes", "%d attributes, more than 64", len(d.Attributes))
		}
		for _, k := range slices.Sorted(maps.Keys(d.Attributes)) {
			ap := fieldpath.Join(p+".attributes", k)
			if problem := spec.CheckLabelKey(k); problem != "" {
				f.add(ap, "%s", problem)
				continue
			}
			f.check(ap, spec.CheckLabelValue(d.Attributes[k]))
		}
		if len(d.Paths) > maxDevicePaths {
			f.add(p+".paths", "%d paths, more than %d", len(d.Paths), maxDevicePaths)
		}
		for j, path := range d.Paths {
			pp := fieldpath.Index(p+".paths", j)
			if problem := checkText(path, 256); problem != "" {
				f.add(pp, "%s", problem)
			} else if !filepath.IsAbs(path) || filepath.Clean(path) != path {
				f.add(pp, "must be a clean absolute path, got %q", path)
			}
		}
	}
}
