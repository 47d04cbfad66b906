package api

import "maps"

// Device is one device of a node other than its GPUs: an accelerator, an
// SR-IOV virtual function of a NIC, an FPGA, an NVMe namespace. Agents
// fingerprint them from their configuration and from sysfs
// (docs/devices.md).
type Device struct {
	// ID is stable on the node: the PCI address ("0000:3b:00.2") for a
	// device found in sysfs, the configured id otherwise.
	ID string `json:"id"`
	// Class is what tasks ask for: "fpga", "nic-vf", "nvme", "accelerator"
	// or any name of the same form (DeviceClassPattern).
	Class string `json:"class"`
	// Attributes describe it ("vendor": "0x8086", "model": "u250"); a
	// request's attributes must all be among them.
	Attributes map[string]string `json:"attributes,omitempty"`
	// NUMA is the NUMA node the device is attached to, -1 if unknown.
	NUMA int `json:"numa"`
	// Paths are the device nodes a task given the device may open
	// (/dev/vfio/12); a task not given it is denied them.
	Paths []string `json:"paths,omitempty"`
}

// DeviceRequest asks for Count devices of Class whose attributes include
// Attributes. NUMALocal wants them on the NUMA node of the task's
// exclusive cores.
type DeviceRequest struct {
	Class      string            `json:"class"`
	Count      int               `json:"count"`
	Attributes map[string]string `json:"attributes,omitempty"`
	NUMALocal  bool              `json:"numaLocal,omitempty"`
}

// DeviceClassPattern is the form of a device class: a lower-case name
// of letters, digits and inner hyphens, 1 to 32 characters.
const DeviceClassPattern = `^[a-z][a-z0-9-]{0,30}[a-z0-9]$|^[a-z]$`

// MaxDevicesPerRequest bounds a request's count (and MaxDevicesPerNode a
// node's list): quantities entering the cell are bounded.
const (
	MaxDevicesPerRequest = 256
	MaxDevicesPerNode    = 4096
)

// Matches reports whether device d serves request r: the same class and
// every requested attribute present with the same value.
func (r *DeviceRequest) Matches(d *Device) bool {
	if d.Class != r.Class {
		return false
	}
	for k, v := range r.Attributes {
		if got, ok := d.Attributes[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func copyDevices(in []Device) []Device {
	if in == nil {
		return nil
	}
	out := make([]Device, len(in))
	for i, d := range in {
		out[i] = d
		out[i].Attributes = maps.Clone(d.Attributes)
		out[i].Paths = append([]string(nil), d.Paths...)
	}
	return out
}
