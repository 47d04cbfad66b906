package fingerprint

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/api"
)

// GPUDeviceNodes maps each GPU's id to its device node under devRoot,
// /dev/nvidiaN: N is the id when it is an index, else the "Device Minor"
// the NVIDIA driver reports for the GPU's UUID under
// procRoot/driver/nvidia/gpus, else the GPU's position in nvidia-smi's
// list (its index). The driver's shared control nodes (nvidiactl,
// nvidia-uvm) are every GPU task's and are not listed.
func GPUDeviceNodes(gpus []api.GPU, devRoot, procRoot string) map[string]string {
	if len(gpus) == 0 {
		return nil
	}
	minors := NVIDIAMinors(procRoot)
	out := make(map[string]string, len(gpus))
	for k, g := range gpus {
		n := strconv.Itoa(k)
		if _, err := strconv.Atoi(g.ID); err == nil {
			n = g.ID
		} else if m, ok := minors[g.ID]; ok {
			n = m
		}
		out[g.ID] = filepath.Join(devRoot, "nvidia"+n)
	}
	return out
}

// NVIDIAMinors maps GPU UUIDs to device minors from the NVIDIA driver's
// procRoot/driver/nvidia/gpus/<bus id>/information files, which hold lines
// like "GPU UUID: GPU-5f1c…" and "Device Minor: 0".
func NVIDIAMinors(procRoot string) map[string]string {
	files, _ := filepath.Glob(filepath.Join(procRoot, "driver", "nvidia", "gpus", "*", "information"))
	out := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var uuid, minor string
		for _, line := range strings.Split(string(data), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "GPU UUID":
				uuid = strings.TrimSpace(v)
			case "Device Minor":
				minor = strings.TrimSpace(v)
			}
		}
		if uuid != "" && minor != "" {
			out[uuid] = minor
		}
	}
	return out
}
