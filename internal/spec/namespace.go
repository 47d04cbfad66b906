package spec

import (
	"math"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/resources"
)

// ParseNamespace decodes a namespace file (docs/tenants.md), YAML or JSON:
//
//	name: team-a
//	description: the web team
//	quota: {cpu: 16, memory: 64Gi, gpu: 2, devices: 4, allocations: 50, maxPriority: 999, workloads: 100, replicas: 5000}
//	allowRootTasks: false
//
// A quota's sizes take the units a workload's resources do (cpu in cores
// or millicores, memory with a unit, gpu in GPUs); the API's own
// cpuMilli, memoryBytes and gpuMilli are accepted too, so a namespace
// printed with -o json can be applied again. Errors name every bad field,
// with "did you mean" for an unknown one.
func ParseNamespace(data []byte) (*api.Namespace, error) {
	ns, _, err := decode(data, (*decoder).namespace)
	return ns, err
}

var (
	namespaceKeys = []string{"name", "description", "quota", "allowRootTasks", "createIndex", "modifyIndex"}
	quotaKeys     = []string{"cpu", "memory", "gpu", "cpuMilli", "memoryBytes", "gpuMilli", "devices", "allocations", "maxPriority", "workloads", "replicas"}
)

func (d *decoder) namespace(root *yaml.Node) *api.Namespace {
	ns := &api.Namespace{}
	if root.Kind != yaml.MappingNode {
		d.fail("", root, "expected a mapping (a namespace), got %s", describe(root))
		return ns
	}
	var name *yaml.Node
	d.fields("", root, namespaceKeys, func(key, p string, v *yaml.Node) bool {
		switch key {
		case "name":
			name = v
			ns.Name = d.name(p, v)
		case "description":
			ns.Description, _ = d.str(p, v)
		case "quota":
			ns.Quota = d.quota(p, v)
		case "allowRootTasks":
			ns.AllowRootTasks, _ = d.boolean(p, v)
		case "createIndex", "modifyIndex":
			// Printed by -o json; the server sets them.
		default:
			return false
		}
		return true
	})
	if !present(name) {
		d.report("name", 1, "required")
	}
	return ns
}

// quota decodes a namespace's limits; an absent field is unbounded.
func (d *decoder) quota(path string, n *yaml.Node) *api.Quota {
	if !present(n) {
		return nil
	}
	q := &api.Quota{}
	given := map[string]*yaml.Node{}
	d.fields(path, n, quotaKeys, func(key, p string, v *yaml.Node) bool {
		given[key] = v
		switch key {
		case "cpu":
			q.CPUMilli = d.quotaQuantity(p, v, "16 or 500m", resources.ParseCPU)
		case "memory":
			q.MemoryBytes = d.quotaQuantity(p, v, "64Gi", resources.ParseBytesWithUnit)
		case "gpu":
			q.GPUMilli = d.quotaQuantity(p, v, "2 or 0.5", resources.ParseCPU) // GPUs in thousandths, as cores are
		case "cpuMilli":
			q.CPUMilli = d.quotaInt(p, v)
		case "memoryBytes":
			q.MemoryBytes = d.quotaInt(p, v)
		case "gpuMilli":
			q.GPUMilli = d.quotaInt(p, v)
		case "devices":
			q.Devices = d.quotaInt(p, v)
		case "allocations":
			q.Allocations = d.quotaInt(p, v)
		case "workloads":
			q.Workloads = d.quotaInt(p, v)
		case "replicas":
			q.Replicas = d.quotaInt(p, v)
		case "maxPriority":
			if i := d.quotaInt(p, v); i != nil {
				if *i > math.MaxInt32 {
					d.fail(p, v, "out of range, got %d", *i) // the server says the range
				} else {
					prio := int(*i)
					q.MaxPriority = &prio
				}
			}
		default:
			return false
		}
		return true
	})
	for _, pair := range [][2]string{{"cpu", "cpuMilli"}, {"memory", "memoryBytes"}, {"gpu", "gpuMilli"}} {
		if present(given[pair[0]]) && present(given[pair[1]]) {
			d.fail(join(path, pair[1]), given[pair[1]], "give %s or %s, not both", pair[0], pair[1])
		}
	}
	return q
}

func (d *decoder) quotaQuantity(path string, n *yaml.Node, example string, parse func(string) (int64, error)) *int64 {
	v, ok := d.quantity(path, n, example)
	if !ok {
		return nil
	}
	x, err := parse(v.Value)
	if err != nil {
		d.fail(path, v, "%s", err)
		return nil
	}
	return &x
}

func (d *decoder) quotaInt(path string, n *yaml.Node) *int64 {
	v, ok := d.integer(path, n)
	if !ok {
		return nil
	}
	if v < 0 {
		d.fail(path, n, "must not be negative, got %d", v)
		return nil
	}
	return &v
}
