package server

import (
	"maps"
	"path/filepath"
	"slices"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fieldpath"
	"github.com/strata-dev/strata/internal/spec"
)

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
