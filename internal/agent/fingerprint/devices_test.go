package fingerprint

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

// pciTree builds a fake <root>/bus/pci/devices tree.
type pciTree struct {
	t    *testing.T
	root string
}

func newPCITree(t *testing.T) *pciTree {
	return &pciTree{t: t, root: t.TempDir()}
}

// device adds a PCI device with its vendor, device id, class code and
// NUMA node; extra files and symlinks follow as "name", "content" pairs
// ("->target" makes a symlink).
func (p *pciTree) device(addr, vendor, device, class string, numa string, extra ...string) *pciTree {
	dir := filepath.Join(p.root, "bus", "pci", "devices", addr)
	must(p.t, os.MkdirAll(dir, 0o755))
	files := append([]string{"vendor", vendor, "device", device, "class", class, "numa_node", numa}, extra...)
	for k := 0; k+1 < len(files); k += 2 {
		path := filepath.Join(dir, files[k])
		must(p.t, os.MkdirAll(filepath.Dir(path), 0o755))
		if target, ok := strings.CutPrefix(files[k+1], "->"); ok {
			must(p.t, os.Symlink(target, path))
			continue
		}
		if files[k+1] == "/" {
			must(p.t, os.MkdirAll(path, 0o755))
			continue
		}
		must(p.t, os.WriteFile(path, []byte(files[k+1]+"\n"), 0o644))
	}
	return p
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestDevicesFromSysfs(t *testing.T) {
	tree := newPCITree(t).
		device("0000:00:00.0", "0x8086", "0x2020", "0x060000", "-1"). // host bridge: not a device
		device("0000:17:00.0", "0x10de", "0x20b0", "0x030200", "0").  // NVIDIA GPU: nvidia-smi's
		device("0000:3b:00.0", "0x10ee", "0x5004", "0x058000", "0", "iommu_group", "->../../../kernel/iommu_groups/31").
		device("0000:5e:00.2", "0x8086", "0x154c", "0x020000", "1", "physfn", "->../0000:5e:00.0", "iommu_group", "->../../../kernel/iommu_groups/77").
		device("0000:5e:00.0", "0x8086", "0x1572", "0x020000", "1"). // the physical function: not offered
		device("0000:af:00.0", "0x144d", "0xa808", "0x010802", "1", "nvme/nvme0/nvme0n1", "/", "nvme/nvme0/nvme0n2", "/").
		device("0000:d8:00.0", "0x1d0f", "0x7064", "0x120000", "1") // an inference accelerator
	got, err := Devices(tree.root, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"0000:3b:00.0 fpga numa=0 paths=[/dev/vfio/31] vendor=0x10ee",
		"0000:5e:00.2 nic-vf numa=1 paths=[/dev/vfio/77] vendor=0x8086 pf=0000:5e:00.0",
		// the NVMe controller is not taken: the host's disks are NVMe too
		"0000:d8:00.0 accelerator numa=1 paths=[] vendor=0x1d0f",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d devices, want %d: %+v", len(got), len(want), got)
	}
	for i, d := range got {
		if s := describe(d); s != want[i] {
			t.Errorf("device %d = %q, want %q", i, s, want[i])
		}
	}

	// A rule for the controller offers its namespaces.
	cfg, err := ParseDeviceConfig([]byte(`pci: [{class: nvme, vendor: "0x144d", pciClass: "010802"}]`))
	if err != nil {
		t.Fatal(err)
	}
	got, err = Devices(tree.root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var nvme []string
	for _, d := range got {
		if d.Class == "nvme" {
			nvme = append(nvme, describe(d))
		}
	}
	wantNVMe := "0000:af:00.0/nvme0n1 nvme numa=1 paths=[/dev/nvme0n1] vendor=0x144d namespace=nvme0n1;" +
		"0000:af:00.0/nvme0n2 nvme numa=1 paths=[/dev/nvme0n2] vendor=0x144d namespace=nvme0n2"
	if strings.Join(nvme, ";") != wantNVMe {
		t.Fatalf("nvme namespaces = %q, want %q", nvme, wantNVMe)
	}
}

func describe(d api.Device) string {
	s := d.ID + " " + d.Class + " numa=" + strconv.Itoa(d.NUMA) + " paths=[" + strings.Join(d.Paths, ",") + "] vendor=" + d.Attributes["vendor"]
	for _, k := range []string{"pf", "namespace", "model"} {
		if v, ok := d.Attributes[k]; ok {
			s += " " + k + "=" + v
		}
	}
	return s
}

func TestDevicesFromConfig(t *testing.T) {
	tree := newPCITree(t).
		device("0000:3b:00.0", "0x10ee", "0x5004", "0x058000", "0").
		device("0000:86:00.0", "0x1234", "0x0001", "0x0b4000", "1")
	cfg, err := ParseDeviceConfig([]byte(`
pci:
  - {class: fpga, vendor: "0x10ee", device: "0x5004", attributes: {model: u250}, paths: [/dev/xclmgmt15360]}
  - {class: coproc, vendor: "0x1234"}
devices:
  - {id: ssd-a, class: nvme, numa: 0, paths: [/dev/nvme9n1], attributes: {size: 1Ti}}
`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Devices(tree.root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"0000:3b:00.0 fpga numa=0 paths=[/dev/xclmgmt15360] vendor=0x10ee model=u250",
		"0000:86:00.0 coproc numa=1 paths=[] vendor=0x1234",
		"ssd-a nvme numa=0 paths=[/dev/nvme9n1] vendor=",
	}
	for i, d := range got {
		if i >= len(want) || describe(d) != want[i] {
			t.Errorf("device %d = %q, want %q", i, describe(d), want[min(i, len(want)-1)])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %d devices, want %d", len(got), len(want))
	}
	// a missing sysfs is no error
	if got, err := Devices(filepath.Join(t.TempDir(), "nope"), cfg); err != nil || len(got) != 1 {
		t.Fatalf("no sysfs: %v %v, want the configured device", got, err)
	}
}

func TestDeviceConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"class missing", "pci: [{vendor: '0x10ee'}]", "pci[0].class: required"},
		{"class gpu", "devices: [{id: a, class: gpu}]", "devices[0].class"},
		{"class upper case", "devices: [{id: a, class: FPGA}]", "devices[0].class"},
		{"rule matches everything", "pci: [{class: fpga}]", "pci[0]: a rule needs vendor"},
		{"bad vendor", "pci: [{class: fpga, vendor: xilinx}]", "pci[0].vendor"},
		{"id missing", "devices: [{class: fpga}]", "devices[0].id: required"},
		{"id twice", "devices: [{id: a, class: fpga}, {id: a, class: fpga}]", "devices[1].id"},
		{"relative path", "devices: [{id: a, class: fpga, paths: [dev/x]}]", "devices[0].paths[0]"},
		{"unknown field", "devices: [{id: a, class: fpga, numaNode: 1}]", "numaNode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDeviceConfig([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}
