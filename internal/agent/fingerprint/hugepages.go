package fingerprint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/resources"
)

// HugePages reads the pre-allocated huge page pools under
// <sysRoot>/kernel/mm/hugepages/hugepages-<size>kB/nr_hugepages and
// returns them as the node's capacity of each size the cell schedules
// (2Mi, 1Gi), in bytes. Pools of other sizes are listed in others (the
// caller logs them); a kernel without huge pages has none.
func HugePages(sysRoot string) (capacity api.Resources, others []string, err error) {
	base := filepath.Join(sysRoot, "kernel", "mm", "hugepages")
	entries, err := os.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) {
		return capacity, nil, nil
	}
	if err != nil {
		return capacity, nil, fmt.Errorf("read %s: %w", base, err)
	}
	for _, e := range entries {
		kb, ok := strings.CutPrefix(e.Name(), "hugepages-")
		kb, ok2 := strings.CutSuffix(kb, "kB")
		if !ok || !ok2 {
			continue
		}
		sizeKB, err := strconv.ParseInt(kb, 10, 64)
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(base, e.Name(), "nr_hugepages"))
		if err != nil {
			return capacity, nil, fmt.Errorf("read huge pages %s: %w", e.Name(), err)
		}
		pages, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil || pages < 0 {
			return capacity, nil, fmt.Errorf("parse %s/nr_hugepages %q", e.Name(), strings.TrimSpace(string(data)))
		}
		dst := resources.HugePages(&capacity, sizeKB<<10)
		if dst == nil {
			if pages > 0 {
				others = append(others, fmt.Sprintf("%d pages of %s", pages, resources.FormatBytes(sizeKB<<10)))
			}
			continue
		}
		*dst = pages * sizeKB << 10
	}
	return capacity, others, nil
}
