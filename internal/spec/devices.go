package spec

import (
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
)

// MaxDeviceRequests bounds a task's device requests.
const MaxDeviceRequests = 16

var deviceClassRE = regexp.MustCompile(api.DeviceClassPattern)

// CheckDeviceClass returns what is wrong with a device class name, or "".
func CheckDeviceClass(s string) string {
	switch {
	case s == "gpu" || s == "gpus":
		return `GPUs are asked for with resources.gpu (and gpuModels), not as a device class`
	case !deviceClassRE.MatchString(s):
		return `device class "` + s + `" must be lower-case letters, digits and inner hyphens, 1 to 32 characters, starting with a letter (e.g. fpga, nic-vf, nvme)`
	}
	return ""
}

// devices decodes a task's devices: [{class, count, attributes, numaLocal}].
func (d *decoder) devices(path string, n *yaml.Node) []api.DeviceRequest {
	var out []api.DeviceRequest
	d.items(path, n, func(i int, p string, v *yaml.Node) {
		if i >= MaxDeviceRequests {
			if i == MaxDeviceRequests {
				d.fail(p, v, "at most %d device requests per task", MaxDeviceRequests)
			}
			return
		}
		req := api.DeviceRequest{Count: 1}
		var class *yaml.Node
		ok := d.fields(p, v, deviceKeys, func(key, fp string, fv *yaml.Node) bool {
			switch key {
			case "class":
				class = fv
				if s, ok := d.str(fp, fv); ok {
					if problem := CheckDeviceClass(s); problem != "" {
						d.fail(fp, fv, "%s", problem)
					} else {
						req.Class = s
					}
				}
			case "count":
				if c, ok := d.integer(fp, fv); ok {
					switch {
					case c < 1:
						d.fail(fp, fv, "must be at least 1, got %d", c)
					case c > api.MaxDevicesPerRequest:
						d.fail(fp, fv, "must be at most %d, got %d", api.MaxDevicesPerRequest, c)
					default:
						req.Count = int(c)
					}
				}
			case "attributes":
				req.Attributes = d.textMap(fp, fv, checkLabelKey)
				for k, val := range req.Attributes {
					if problem := checkLabelValue(val, true); problem != "" {
						d.fail(join(fp, k), fv, "%s", problem)
					}
				}
			case "numaLocal":
				req.NUMALocal, _ = d.boolean(fp, fv)
			default:
				return false
			}
			return true
		})
		if !ok {
			return
		}
		if !present(class) {
			d.missing(join(p, "class"), v, "required: the device class, e.g. fpga")
		}
		if req.Class != "" {
			out = append(out, req)
		}
	})
	return out
}

// checkDevices checks rules that span a task's fields: numaLocal needs
// exclusive cores (they choose the NUMA node), and one class is asked
// for once.
func (d *decoder) checkDevices(path string, n *yaml.Node, t *api.Task) {
	seen := map[string]bool{}
	for i, r := range t.Devices {
		p := index(join(path, "devices"), i)
		if r.NUMALocal && !t.ExclusiveCores {
			d.fail(join(p, "numaLocal"), n, "numaLocal needs exclusiveCores: the task's cores choose the NUMA node")
		}
		key := r.Class + " " + attrKey(r.Attributes)
		if seen[key] {
			d.fail(join(p, "class"), n, "class %s with these attributes is asked for twice; add the counts", r.Class)
		}
		seen[key] = true
	}
}

func attrKey(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}
