package fingerprint

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// FeatureFlags are the ISA extensions the agent reports as node labels
// (api.LabelCPUFeaturePfx + flag = "true"): those a workload may need to
// run at all, by the names /proc/cpuinfo gives them (x86 "flags", arm64
// "Features"). Other flags (errata, virtualisation plumbing) are left
// out: a label per flag of ~150 would bloat every node for nothing.
var FeatureFlags = []string{
	// x86-64
	"sse4_2", "avx", "avx2", "fma", "f16c", "bmi2", "aes", "sha_ni", "vaes", "gfni",
	"avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512_vnni",
	"avx512_bf16", "avx512_fp16", "avx512ifma", "avx512vbmi", "avx_vnni",
	"amx_tile", "amx_bf16", "amx_int8",
	// arm64
	"asimd", "sve", "sve2", "atomics", "sha2", "sha512", "bf16", "i8mm",
}

// CPUFeatures reads <procRoot>/cpuinfo and returns the FeatureFlags the
// first CPU has, sorted. A kernel without cpuinfo has none.
func CPUFeatures(procRoot string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(procRoot, "cpuinfo"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read cpuinfo: %w", err)
	}
	want := map[string]bool{}
	for _, f := range FeatureFlags {
		want[f] = true
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		key = strings.TrimSpace(key)
		if !ok || (key != "flags" && key != "Features") {
			continue
		}
		var out []string
		for _, f := range strings.Fields(value) {
			if want[f] {
				out = append(out, f)
				delete(want, f) // listed once
			}
		}
		sort.Strings(out)
		return out, nil // every CPU of a machine has the same flags
	}
	return nil, sc.Err()
}
