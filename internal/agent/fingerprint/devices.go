package fingerprint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
)

// DeviceConfig is the agent's device configuration (--devices-config, a
// YAML file): rules that name the class of PCI devices found in sysfs,
// and devices listed outright (docs/devices.md).
type DeviceConfig struct {
	// PCI rules are tried in order before the built-in ones; the first
	// that matches a PCI device names its class.
	PCI []PCIRule `yaml:"pci"`
	// Devices are devices the agent offers as they are written, with
	// their NUMA node and device nodes.
	Devices []StaticDevice `yaml:"devices"`
	// IgnoreBuiltin turns the built-in PCI rules off.
	IgnoreBuiltin bool `yaml:"ignoreBuiltin"`
}

// PCIRule names the class of PCI devices whose vendor, device id and
// class code match (empty fields match anything; PCIClass is a prefix of
// the six-digit class code, "0108" for mass storage/NVM). Attributes are
// added to those read from sysfs; Paths, when set, are the device nodes
// of every matched device (otherwise /dev/vfio/<iommu group> when the
// device has one).
type PCIRule struct {
	Class      string            `yaml:"class"`
	Vendor     string            `yaml:"vendor"`
	Device     string            `yaml:"device"`
	PCIClass   string            `yaml:"pciClass"`
	Attributes map[string]string `yaml:"attributes"`
	Paths      []string          `yaml:"paths"`
}

// StaticDevice is a device listed in the configuration.
type StaticDevice struct {
	ID         string            `yaml:"id"`
	Class      string            `yaml:"class"`
	NUMA       *int              `yaml:"numa"`
	Attributes map[string]string `yaml:"attributes"`
	Paths      []string          `yaml:"paths"`
}

var (
	classRE = regexp.MustCompile(api.DeviceClassPattern)
	hexRE   = regexp.MustCompile(`^0x[0-9a-f]{1,6}$`)
)

// LoadDeviceConfig reads and checks a device configuration; errors name
// the field ("pci[1].class: ...").
func LoadDeviceConfig(path string) (*DeviceConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("device config: %w", err)
	}
	return ParseDeviceConfig(data)
}

// ParseDeviceConfig decodes and checks a device configuration.
func ParseDeviceConfig(data []byte) (*DeviceConfig, error) {
	var cfg DeviceConfig
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("device config: %w", err)
	}
	for i, r := range cfg.PCI {
		p := fmt.Sprintf("pci[%d]", i)
		if err := checkClass(p, r.Class); err != nil {
			return nil, err
		}
		for _, f := range []struct{ name, v string }{{"vendor", r.Vendor}, {"device", r.Device}} {
			if f.v != "" && !hexRE.MatchString(strings.ToLower(f.v)) {
				return nil, fmt.Errorf("device config: %s.%s: %q is not a hex id like 0x10ee", p, f.name, f.v)
			}
		}
		if r.Vendor == "" && r.Device == "" && r.PCIClass == "" {
			return nil, fmt.Errorf("device config: %s: a rule needs vendor, device or pciClass (it would take every PCI device)", p)
		}
		if err := checkPaths(p, r.Paths); err != nil {
			return nil, err
		}
	}
	ids := map[string]bool{}
	for i, d := range cfg.Devices {
		p := fmt.Sprintf("devices[%d]", i)
		switch {
		case d.ID == "":
			return nil, fmt.Errorf("device config: %s.id: required", p)
		case ids[d.ID]:
			return nil, fmt.Errorf("device config: %s.id: %q listed twice", p, d.ID)
		}
		ids[d.ID] = true
		if err := checkClass(p, d.Class); err != nil {
			return nil, err
		}
		if err := checkPaths(p, d.Paths); err != nil {
			return nil, err
		}
	}
	return &cfg, nil
}

func checkClass(path, class string) error {
	switch {
	case class == "":
		return fmt.Errorf("device config: %s.class: required", path)
	case class == "gpu" || !classRE.MatchString(class):
		return fmt.Errorf("device config: %s.class: %q is not a device class (lower-case letters, digits, inner hyphens; not gpu)", path, class)
	}
	return nil
}

func checkPaths(path string, paths []string) error {
	for i, p := range paths {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("device config: %s.paths[%d]: %q must be an absolute path", path, i, p)
		}
	}
	return nil
}

// builtinRules name the classes of devices that say what they are.
var builtinRules = []PCIRule{
	{Class: "fpga", Vendor: "0x10ee"}, // Xilinx (AMD)
	{Class: "fpga", Vendor: "0x1172"}, // Altera (Intel)
	{Class: "accelerator", PCIClass: "12"},
}

// Devices lists the node's devices: the configured ones, then those found
// under <sysRoot>/bus/pci/devices (default /sys), sorted by id. A PCI
// device is taken when a rule of cfg (then a built-in one) names its
// class (an NVMe controller then gives one device per namespace), or
// when it is an SR-IOV virtual function of a network controller (class
// nic-vf). NVIDIA display controllers are GPUs, never devices here. A
// missing sysfs tree is no error.
func Devices(sysRoot string, cfg *DeviceConfig) ([]api.Device, error) {
	if cfg == nil {
		cfg = &DeviceConfig{}
	}
	var out []api.Device
	for _, s := range cfg.Devices {
		numa := -1
		if s.NUMA != nil {
			numa = *s.NUMA
		}
		out = append(out, api.Device{ID: s.ID, Class: s.Class, NUMA: numa, Attributes: s.Attributes, Paths: s.Paths})
	}
	if sysRoot == "" {
		sysRoot = "/sys"
	}
	rules := cfg.PCI
	if !cfg.IgnoreBuiltin {
		rules = append(slices.Clone(rules), builtinRules...)
	}
	base := filepath.Join(sysRoot, "bus", "pci", "devices")
	entries, err := os.ReadDir(base)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("read %s: %w", base, err)
	}
	for _, e := range entries {
		out = append(out, pciDevices(filepath.Join(base, e.Name()), e.Name(), rules)...)
	}
	slices.SortStableFunc(out, func(a, b api.Device) int { return strings.Compare(a.ID, b.ID) })
	for i := 1; i < len(out); i++ {
		if out[i].ID == out[i-1].ID {
			return nil, fmt.Errorf("device %s found twice (configured and in sysfs?)", out[i].ID)
		}
	}
	if len(out) > api.MaxDevicesPerNode {
		return nil, fmt.Errorf("%d devices, more than %d", len(out), api.MaxDevicesPerNode)
	}
	return out, nil
}

// pciDevices reads one PCI device directory and returns what it offers.
func pciDevices(dir, addr string, rules []PCIRule) []api.Device {
	vendor, device, class := readHex(dir, "vendor"), readHex(dir, "device"), readHex(dir, "class")
	if vendor == "" || class == "" {
		return nil
	}
	code := strings.TrimPrefix(class, "0x") // six digits: class, subclass, prog-if
	if vendor == "0x10de" && strings.HasPrefix(code, "03") {
		return nil // an NVIDIA GPU: nvidia-smi reports it
	}
	dev := api.Device{
		ID:         addr,
		NUMA:       readInt(dir, "numa_node", -1),
		Attributes: map[string]string{"vendor": vendor, "device": device, "pciClass": class},
	}
	if g, err := os.Readlink(filepath.Join(dir, "iommu_group")); err == nil {
		dev.Paths = []string{"/dev/vfio/" + filepath.Base(g)}
	}
	for _, r := range rules {
		if !r.matches(vendor, device, code) {
			continue
		}
		dev.Class = r.Class
		for k, v := range r.Attributes {
			dev.Attributes[k] = v
		}
		if len(r.Paths) > 0 {
			dev.Paths = slices.Clone(r.Paths)
		}
		if strings.HasPrefix(code, "010802") {
			return nvmeNamespaces(dir, dev)
		}
		return []api.Device{dev}
	}
	if strings.HasPrefix(code, "02") && exists(filepath.Join(dir, "physfn")) {
		dev.Class = "nic-vf"
		if pf, err := os.Readlink(filepath.Join(dir, "physfn")); err == nil {
			dev.Attributes["pf"] = filepath.Base(pf)
		}
		return []api.Device{dev}
	}
	return nil
}

// nvmeNamespaces lists the namespaces of an NVMe controller a rule
// named (<dir>/nvme/nvmeN/nvmeNnM): each is a device of the rule's class
// whose node is /dev/nvmeNnM. Controllers are never taken by a built-in
// rule: the host's own disks are NVMe namespaces too.
func nvmeNamespaces(dir string, ctrl api.Device) []api.Device {
	ctrls, _ := filepath.Glob(filepath.Join(dir, "nvme", "nvme*"))
	var out []api.Device
	for _, c := range ctrls {
		nss, _ := filepath.Glob(filepath.Join(c, filepath.Base(c)+"n*"))
		for _, ns := range nss {
			name := filepath.Base(ns)
			d := ctrl
			d.ID = ctrl.ID + "/" + name
			d.Attributes = map[string]string{}
			for k, v := range ctrl.Attributes {
				d.Attributes[k] = v
			}
			d.Attributes["namespace"] = name
			d.Paths = []string{"/dev/" + name}
			out = append(out, d)
		}
	}
	return out
}

func (r *PCIRule) matches(vendor, device, code string) bool {
	return (r.Vendor == "" || strings.EqualFold(r.Vendor, vendor)) &&
		(r.Device == "" || strings.EqualFold(r.Device, device)) &&
		(r.PCIClass == "" || strings.HasPrefix(code, strings.TrimPrefix(strings.ToLower(r.PCIClass), "0x")))
}

func readHex(dir, name string) string {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(string(data)))
}

func readInt(dir, name string, def int) int {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return def
	}
	return n
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
