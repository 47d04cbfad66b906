package spec

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
)

// CellConfigKind is the kind of a cell configuration document.
const CellConfigKind = "CellConfig"

// Policies lists the scheduling policy types a workload or the cell may
// name.
var Policies = []string{api.PolicyBinpack, api.PolicySpread, api.PolicyFGD, api.PolicyDotProduct, api.PolicyRandom, api.PolicyPredictive}

func knownPolicy(s string) bool {
	for _, p := range Policies {
		if p == s {
			return true
		}
	}
	return false
}

func policyList() string { return strings.Join(Policies, ", ") }

// ParseCellConfig decodes and validates a cell configuration document:
//
//	apiVersion: strata.dev/v1
//	kind: CellConfig
//	schedulingPolicy: spread
//	timeWindows:
//	  - {name: peak-hours, days: [mon, tue, wed, thu, fri], start: "09:00", end: "18:00", timeZone: Europe/Berlin}
//
// Errors name every bad field, as Parse's do.
func ParseCellConfig(data []byte) (*api.CellConfig, error) {
	c, _, err := decode(data, (*decoder).cellConfig)
	return c, err
}

func (d *decoder) cellConfig(root *yaml.Node) *api.CellConfig {
	c := &api.CellConfig{}
	if root.Kind != yaml.MappingNode {
		d.fail("", root, "expected a mapping (a CellConfig document), got %s", describe(root))
		return c
	}
	var apiVersion, kind *yaml.Node
	names := map[string]bool{}
	d.fields("", root, cellConfigKeys, func(key, p string, v *yaml.Node) bool {
		switch key {
		case "apiVersion":
			apiVersion = v
			if s, ok := d.str(p, v); ok && s != APIVersion {
				d.fail(p, v, "unsupported apiVersion %q (want %s)", s, APIVersion)
			}
		case "kind":
			kind = v
			if s, ok := d.str(p, v); ok && s != CellConfigKind {
				d.fail(p, v, "unsupported kind %q (want %s)", s, CellConfigKind)
			}
		case "schedulingPolicy":
			if s, ok := d.str(p, v); ok {
				if !knownPolicy(s) {
					d.fail(p, v, "unknown scheduling policy %q (want %s)", s, policyList())
				}
				c.SchedulingPolicy = s
			}
		case "timeWindows":
			d.items(p, v, func(_ int, ip string, iv *yaml.Node) {
				if w, ok := d.timeWindow(ip, iv); ok {
					if names[w.Name] {
						d.fail(join(ip, "name"), iv, "duplicate time window %q", w.Name)
					}
					names[w.Name] = true
					c.TimeWindows = append(c.TimeWindows, w)
				}
			})
		case "limits":
			c.Limits = d.cellLimits(p, v)
		default:
			return false
		}
		return true
	})
	if !present(apiVersion) {
		d.report("apiVersion", 1, "required (want %s)", APIVersion)
	}
	if !present(kind) {
		d.report("kind", 1, "required (want %s)", CellConfigKind)
	}
	return c
}

func (d *decoder) timeWindow(path string, n *yaml.Node) (api.TimeWindow, bool) {
	w := api.TimeWindow{}
	if !d.requireMapping(path, n) {
		return w, false
	}
	errsBefore := len(d.errs.List)
	var name, start, end *yaml.Node
	d.fields(path, n, timeWindowKeys, func(key, p string, v *yaml.Node) bool {
		switch key {
		case "name":
			name = v
			w.Name = d.name(p, v)
		case "days":
			w.Days, _ = d.strings(p, v, false)
		case "start":
			start = v
			w.Start, _ = d.str(p, v)
		case "end":
			end = v
			w.End, _ = d.str(p, v)
		case "timeZone":
			w.TimeZone, _ = d.str(p, v)
		default:
			return false
		}
		return true
	})
	for _, f := range []struct {
		field string
		v     *yaml.Node
	}{{"name", name}, {"start", start}, {"end", end}} {
		if !present(f.v) {
			d.missing(join(path, f.field), n, "required")
		}
	}
	if len(d.errs.List) > errsBefore {
		return w, false
	}
	for _, fe := range w.Validate() {
		d.fail(path+"."+fe.Path, n, "%s", fe.Message)
	}
	return w, len(d.errs.List) == errsBefore
}

// cellLimits decodes the cell's bounds (api.CellLimits): positive
// integers, an absent one its default.
func (d *decoder) cellLimits(path string, n *yaml.Node) *api.CellLimits {
	if !d.requireMapping(path, n) {
		return nil
	}
	l := &api.CellLimits{}
	d.fields(path, n, cellLimitKeys, func(key, p string, v *yaml.Node) bool {
		var field *int64
		switch key {
		case "workloads":
			field = &l.Workloads
		case "replicas":
			field = &l.Replicas
		case "namespaceWorkloads":
			field = &l.NamespaceWorkloads
		case "namespaceReplicas":
			field = &l.NamespaceReplicas
		default:
			return false
		}
		if i, ok := d.integer(p, v); ok {
			if i <= 0 {
				d.fail(p, v, "must be positive (leave it out for the default), got %d", i)
			} else {
				*field = i
			}
		}
		return true
	})
	return l
}
