package cli

import (
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/spec"
)

// strata namespace … and strata quota … (docs/tenants.md). A quota is
// part of its namespace: `namespace apply` sets both; `quota list|show`
// are the views of limits against usage.

func newNamespaceCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "namespace",
		Aliases: []string{"namespaces", "ns"},
		Short:   "Tenants: create, list, show and delete namespaces (with their quotas)",
		Long: `Workloads live in namespaces; ACL policies grant capabilities per
namespace, and a namespace's quota bounds what its allocations may hold.
Creating, changing and deleting a namespace needs "cell-manage" on the
cell; showing one needs "read" in it. The default namespace always exists.`,
		Example: `  strata namespace apply -f team-a.yaml
  strata namespace list
  strata namespace show team-a -o json
  strata run -n team-a -f web.yaml
  strata namespace delete team-a       # refused while it holds workloads`,
	}
	cmd.AddCommand(newNamespaceApplyCmd(g), newNamespaceListCmd(g, "list"), newNamespaceShowCmd(g, "show"), newNamespaceDeleteCmd(g))
	return cmd
}

func newQuotaCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quota",
		Short: "Namespaces' quotas against their usage (set with 'strata namespace apply')",
		Long: `A quota is part of its namespace and is set with 'strata namespace apply'.
These commands show each limit next to what the namespace holds now.`,
		Example: "  strata quota list\n  strata quota show team-a -o json",
	}
	cmd.AddCommand(newNamespaceListCmd(g, "list"), newNamespaceShowCmd(g, "show"))
	return cmd
}

func newNamespaceApplyCmd(g *globals) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "apply -f FILE",
		Short: "Create or replace a namespace and its quota from a YAML or JSON file",
		Long: `Create or replace a namespace. A namespace file looks like this (every
quota field is optional: an absent one is unbounded, 0 allows none):

  name: team-a
  description: the web team
  quota:
    cpu: 16                  # cores (or 500m), as a task's resources.cpu
    memory: 64Gi             # a unit is required, as for a task's memory
    gpu: 2                   # GPUs; 0.5 is a share of one
    devices: 4               # GPUs and GPU shares held
    allocations: 50
    maxPriority: 999         # batch and best-effort only
  allowRootTasks: false      # tasks may not ask for user: root (the default namespace
                             # allows it until a record for it is applied)

The API's own names (cpuMilli, memoryBytes, gpuMilli) are accepted too, so
what 'namespace show -o json' prints applies again. A misspelt field is
refused with the name it likely stands for.`,
		Example: "  strata namespace apply -f team-a.yaml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			b, err := os.ReadFile(file)
			if err != nil {
				return failf("-f: %v", err)
			}
			n, err := spec.ParseNamespace(b)
			if err != nil {
				return failf("%s is not a valid namespace:\n%v", file, err)
			}
			out, err := g.client().ApplyNamespace(cmd.Context(), n)
			if err != nil {
				return failf("%v", err)
			}
			if g.structured() {
				return g.printData(out)
			}
			fmt.Fprintf(g.stdout, "namespace %s applied\n", out.Name)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "namespace file (YAML or JSON)")
	cmd.MarkFlagRequired("file")
	addOutputFlag(cmd, g)
	return cmd
}

func newNamespaceListCmd(g *globals, use string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: "List namespaces with their quotas and usage (needs cell read)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			list, err := g.client().Namespaces(cmd.Context())
			if err != nil {
				return failf("%v", err)
			}
			return printListing(g, list, namespaceColumns)
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func newNamespaceShowCmd(g *globals, use string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use + " NAME",
		Short: "Show a namespace: its quota and what it holds (needs read in it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			n, err := g.client().NamespaceStatus(cmd.Context(), args[0])
			if err != nil {
				return failf("%v", err)
			}
			if g.structured() {
				return g.printData(n)
			}
			if err := printListing(g, []*api.NamespaceStatus{n}, namespaceColumns); err != nil {
				return err
			}
			if n.Description != "" {
				fmt.Fprintf(g.stdout, "\n%s\n", n.Description)
			}
			return nil
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func newNamespaceDeleteCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a namespace (refused while it holds workloads)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.client().DeleteNamespace(cmd.Context(), args[0]); err != nil {
				return failf("%v", err)
			}
			fmt.Fprintf(g.stdout, "namespace %s deleted\n", args[0])
			return nil
		},
	}
}

// namespaceColumns show each quota dimension as "used/limit" ("used" alone
// when unbounded), in the units a workload's resources use.
var namespaceColumns = []column[*api.NamespaceStatus]{
	{header: "NAMESPACE", cell: func(n *api.NamespaceStatus) string { return n.Name }},
	{header: "WORKLOADS", cell: func(n *api.NamespaceStatus) string { return usedOf(int64(n.Workloads), quotaOf(n).Workloads, count) }},
	{header: "REPLICAS", cell: func(n *api.NamespaceStatus) string { return usedOf(n.Replicas, quotaOf(n).Replicas, count) }},
	{header: "CPU", cell: func(n *api.NamespaceStatus) string { return usedOf(n.Usage.CPUMilli, quotaOf(n).CPUMilli, cpuStr) }},
	{header: "MEMORY", cell: func(n *api.NamespaceStatus) string {
		return usedOf(n.Usage.MemoryBytes, quotaOf(n).MemoryBytes, bytesStr)
	}},
	{header: "GPU", cell: func(n *api.NamespaceStatus) string { return usedOf(n.Usage.GPUMilli, quotaOf(n).GPUMilli, cpuStr) }},
	{header: "DEVICES", cell: func(n *api.NamespaceStatus) string { return usedOf(n.Usage.Devices, quotaOf(n).Devices, count) }},
	{header: "ALLOCS", cell: func(n *api.NamespaceStatus) string { return usedOf(n.Usage.Allocations, quotaOf(n).Allocations, count) }},
	{header: "MAX PRIORITY", cell: func(n *api.NamespaceStatus) string {
		if q := quotaOf(n); q.MaxPriority != nil {
			return strconv.Itoa(*q.MaxPriority)
		}
		return "-"
	}},
	{header: "DESCRIPTION", wide: true, cell: func(n *api.NamespaceStatus) string { return dash(n.Description) }},
}

func quotaOf(n *api.NamespaceStatus) *api.Quota {
	if n.Quota == nil {
		return &api.Quota{}
	}
	return n.Quota
}

func usedOf(used int64, limit *int64, unit func(int64) string) string {
	if limit == nil {
		return unit(used)
	}
	return unit(used) + "/" + unit(*limit)
}

func count(n int64) string { return strconv.FormatInt(n, 10) }
