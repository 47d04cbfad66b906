package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/spec"
)

func newCellCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cell",
		Short: "Show or change the cell's configuration: the default scheduling policy and named time windows",
		Long: `The cell configuration is replicated state, like workloads: every server
schedules with the same one.

  schedulingPolicy  the policy of workloads that name none (binpack when unset)
  timeWindows       named daily windows that prefer/avoid rules may be restricted
                    to, e.g. a power zone's peak hours:
                      avoid: [{key: powerZone, values: [B], window: peak-hours}]
                    outside its window such a rule does not apply.

A document looks like this (examples/cell.yaml):

  apiVersion: strata.dev/v1
  kind: CellConfig
  schedulingPolicy: binpack
  timeWindows:
    - name: peak-hours
      days: [mon, tue, wed, thu, fri]   # empty: every day
      start: "09:00"                    # inclusive
      end: "18:00"                      # exclusive; before start wraps past midnight, equal: all day
      timeZone: Europe/Berlin           # IANA name, default UTC`,
	}
	cmd.AddCommand(newCellShowCmd(g), newCellSetCmd(g))
	return cmd
}

func newCellShowCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "config",
		Short:   "Show the cell configuration",
		Example: "  strata cell config\n  strata cell config -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			cfg, _, err := g.client().CellConfig(cmd.Context(), nil)
			if err != nil {
				return failf("%v", err)
			}
			if g.structured() {
				return g.printData(cfg)
			}
			return printCellConfig(g.stdout, cfg)
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func newCellSetCmd(g *globals) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "set -f FILE",
		Short: "Replace the cell configuration with a CellConfig document",
		Long: `Replace the cell configuration. The file is checked locally first, then by the
server; nothing is written when either rejects it, and every bad field is named.

The configuration holds the default scheduling policy, the named time windows,
and the cell's limits: how many workloads it stores and how many replicas its
running workloads want, in all and per namespace (docs/limits.md).`,
		Example: "  strata cell set -f examples/cell.yaml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			doc, err := readSpecFile(file)
			if err != nil {
				return err
			}
			if _, err := spec.ParseCellConfig(doc); err != nil {
				return failf("%s is not a valid CellConfig:\n%v", file, err)
			}
			cfg, err := g.client().SetCellConfig(cmd.Context(), doc)
			if err != nil {
				return failf("set cell configuration: %v", err)
			}
			fmt.Fprintf(g.stdout, "cell configuration set (index %d)\n", cfg.ModifyIndex)
			return printCellConfig(g.stdout, cfg)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "CellConfig YAML file (- for stdin)")
	return cmd
}

func printCellConfig(w io.Writer, cfg *api.CellConfig) error {
	policy := cfg.SchedulingPolicy
	if policy == "" {
		policy = api.PolicyBinpack + " (unset)"
	}
	fmt.Fprintf(w, "Default policy:  %s\n", policy)
	l, note := cfg.Limits.Effective(), ""
	if cfg.Limits == nil {
		note = " (the defaults)"
	}
	fmt.Fprintf(w, "Limits:          %d workloads and %d replicas of running workloads in the cell, %d and %d in a namespace whose quota sets none%s\n",
		l.Workloads, l.Replicas, l.NamespaceWorkloads, l.NamespaceReplicas, note)
	if len(cfg.TimeWindows) == 0 {
		fmt.Fprintln(w, "Time windows:    none")
		return nil
	}
	fmt.Fprintln(w, "Time windows:")
	t := newTable(w, "  NAME", "DAYS", "START", "END", "TIME ZONE")
	for _, tw := range cfg.TimeWindows {
		days, tz := strings.Join(tw.Days, ","), tw.TimeZone
		if days == "" {
			days = "every day"
		}
		if tz == "" {
			tz = "UTC"
		}
		t.row("  "+tw.Name, days, tw.Start, tw.End, tz)
	}
	return t.flush()
}
