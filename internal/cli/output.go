package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/resources"
	"github.com/strata-dev/strata/internal/suggest"
)

// Output formats of -o/--output. json and yaml print what the API
// answered, whole; table shows the columns people read first, and wide
// adds the rest (full ids, addresses, times).
const (
	outTable = "table"
	outWide  = "wide"
	outJSON  = "json"
	outYAML  = "yaml"
)

var outputFormats = []string{outTable, outWide, outJSON, outYAML}

// addOutputFlag adds -o/--output to a command that prints what it read.
func addOutputFlag(cmd *cobra.Command, g *globals) {
	cmd.Flags().StringVarP(&g.output, "output", "o", outTable, "output format: table, wide (more columns, full ids), json or yaml")
	cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputFormats, cobra.ShellCompDirectiveNoFileComp))
}

func checkOutput(g *globals) error {
	if g.output == "" || slices.Contains(outputFormats, g.output) {
		return nil
	}
	return failf("--output: unknown format %q (want table, wide, json or yaml)%s", g.output, suggest.DidYouMean(g.output, outputFormats))
}

// structured reports whether -o asks for the data itself (json, yaml)
// rather than a table.
func (g *globals) structured() bool { return g.output == outJSON || g.output == outYAML }

// wide reports whether -o wide asks for every column.
func (g *globals) wide() bool { return g.output == outWide }

// printData writes v as -o asks: YAML for yaml, else indented JSON.
func (g *globals) printData(v any) error {
	if g.output == outYAML {
		return printYAML(g.stdout, v)
	}
	return printJSON(g.stdout, v)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printYAML writes v as YAML with the field names of its JSON form; each
// document starts with ---, so that a watch's stream splits.
func printYAML(w io.Writer, v any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "---\n%s", b)
	return err
}

// id is an id as a table shows it: the 8 characters any command accepts
// back, or the whole id with -o wide.
func (g *globals) id(id string) string {
	if g.wide() {
		return id
	}
	return shortID(id)
}

// column is one column of a listing: its header, whether only -o wide
// shows it, and its cell for a row.
type column[T any] struct {
	header string
	wide   bool
	cell   func(T) string
}

// printListing writes rows as -o asks: the data itself for json and yaml,
// else a table of cols (the wide ones with -o wide). Every listing goes
// through it, so each has every format.
func printListing[T any](g *globals, rows []T, cols []column[T]) error {
	if g.structured() {
		if rows == nil {
			rows = []T{}
		}
		return g.printData(rows)
	}
	var shown []column[T]
	for _, c := range cols {
		if !c.wide || g.wide() {
			shown = append(shown, c)
		}
	}
	var headers []string
	for _, c := range shown {
		if c.header != "" {
			headers = make([]string, len(shown))
			for i, c := range shown {
				headers[i] = c.header
			}
			break
		}
	}
	t := newTable(g.stdout, headers...) // no headers: rows under an earlier table
	cells := make([]string, len(shown))
	for _, r := range rows {
		for i, c := range shown {
			cells[i] = c.cell(r)
		}
		t.row(cells...)
	}
	return t.flush()
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

// timeStr is a time as tables show it (UTC, to the second), "-" if unset.
func timeStr(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.DateTime)
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
