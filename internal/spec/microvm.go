package spec

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
)

// DriverMicroVM boots each task as a qemu micro-VM whose root file system
// is its image (docs/drivers.md).
const DriverMicroVM = "microvm"

// MicroVMMinMemoryBytes is the least memory a micro-VM task may ask for:
// the guest kernel and init need it before the image is unpacked. A
// microvm task that sets no memory gets this much.
const MicroVMMinMemoryBytes = 128 << 20

// microVMImageSchemes are the image references the micro-VM driver reads.
var microVMImageSchemes = []string{"oci-archive:", "oci:"}

// checkMicroVM checks what the microvm driver needs: a local OCI image and
// enough memory to boot. res is the task's resources node, if any.
func (d *decoder) checkMicroVM(path string, n *yaml.Node, t *api.Task, image, res *yaml.Node) {
	if t.Driver != DriverMicroVM {
		return
	}
	switch {
	case t.Image == "":
		d.missing(join(path, "image"), n, "required for driver microvm: a local OCI image, oci-archive:PATH or oci:DIR")
	case !hasAnyPrefix(t.Image, microVMImageSchemes):
		d.fail(join(path, "image"), image, "driver microvm reads local OCI images: want oci-archive:PATH or oci:DIR, got %q", t.Image)
	}
	mem := fieldNode(res, "memory")
	switch {
	case mem == nil:
		t.Resources.MemoryBytes = max(t.Resources.MemoryBytes, MicroVMMinMemoryBytes)
	case t.Resources.MemoryBytes > 0 && t.Resources.MemoryBytes < MicroVMMinMemoryBytes:
		d.fail(join(join(path, "resources"), "memory"), mem, "a micro-VM needs at least %s, got %s",
			formatMiB(MicroVMMinMemoryBytes), formatMiB(t.Resources.MemoryBytes))
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) && len(s) > len(p) {
			return true
		}
	}
	return false
}

// fieldNode returns the value of key in a mapping node, or nil.
func fieldNode(n *yaml.Node, key string) *yaml.Node {
	m := deref(n)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func formatMiB(b int64) string { return fmt.Sprintf("%dMiB", b>>20) }
