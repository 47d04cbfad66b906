package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/resources"
)

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table writes aligned columns.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, headers ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	if len(headers) > 0 {
		t.row(headers...)
	}
	return t
}

func (t *table) row(cols ...string) { fmt.Fprintln(t.tw, strings.Join(cols, "\t")) }
func (t *table) flush() error       { return t.tw.Flush() }

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func formatLabels(m map[string]string) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ",")
}

func since(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return time.Since(t).Round(time.Second).String()
}

// bytesStr renders a byte count for people: exact when it is a round
// number, else to one decimal in the largest binary unit.
func bytesStr(n int64) string {
	if exact := resources.FormatBytes(n); len(exact) <= 7 {
		return exact
	}
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	v, unit := float64(n), "B"
	for _, u := range units {
		if v < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	return fmt.Sprintf("%.1f%s", v, unit)
}
func cpuStr(m int64) string { return resources.FormatCPU(m) }

// quantityStr renders v of unit u for people: bytes as bytesStr does,
// everything else in its exact syntax.
func quantityStr(u api.Unit, v int64) string {
	if u == api.UnitBytes {
		return bytesStr(v)
	}
	return resources.Format(u, v)
}

// plural writes "1 node", "3 nodes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
