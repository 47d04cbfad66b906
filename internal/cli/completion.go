package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
)

// Shell completion of what the cell holds (cobra's dynamic completion:
// `strata completion bash|zsh|fish|powershell` prints the script, which
// calls back into strata for the candidates). Each completer asks the cell
// with a short deadline and offers nothing when it cannot answer: a slow
// or absent cell must not hang the shell.

// completionTimeout bounds one completer's questions to the cell.
const completionTimeout = 2 * time.Second

type completer = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// completeFrom runs list against the cell for the command's first
// argument only (args already given take none).
func completeFrom(g *globals, list func(ctx context.Context, c *api.Client) ([]string, error)) completer {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return askCell(g, toComplete, list)
	}
}

func askCell(g *globals, toComplete string, list func(ctx context.Context, c *api.Client) ([]string, error)) ([]string, cobra.ShellCompDirective) {
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	c := g.client()
	c.RetryFor = completionTimeout
	all, err := list(ctx, c)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
	}
	var out []string
	for _, s := range all {
		if strings.HasPrefix(s, toComplete) {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeWorkloads offers the namespace's workload names.
func completeWorkloads(g *globals) completer {
	return completeFrom(g, workloadNames)
}

func workloadNames(ctx context.Context, c *api.Client) ([]string, error) {
	list, _, err := c.Workloads(ctx, nil)
	var out []string
	for _, w := range list {
		out = append(out, w.Name+"\t"+w.Status)
	}
	return out, err
}

// completeNodes offers node names and the ids listings print, each with
// what it is.
func completeNodes(g *globals) completer {
	return completeFrom(g, nodeRefs)
}

func nodeRefs(ctx context.Context, c *api.Client) ([]string, error) {
	nodes, _, err := c.Nodes(ctx, nil)
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name+"\tnode "+shortID(n.ID)+", "+n.Status, shortID(n.ID)+"\t"+n.Name+", "+n.Status)
	}
	return out, err
}

// completeAllocs offers allocation ids (the 8 characters listings print).
func completeAllocs(g *globals) completer {
	return completeFrom(g, func(ctx context.Context, c *api.Client) ([]string, error) {
		allocs, _, err := c.Allocations(ctx, "", nil)
		var out []string
		for _, a := range allocs {
			out = append(out, fmt.Sprintf("%s\t%s %s[%d] on %s, %s", shortID(a.ID), a.Workload, a.Group, a.Index, a.NodeName, a.ClientStatus))
		}
		return out, err
	})
}

// completeNamespaces offers the cell's namespaces, for -n.
func completeNamespaces(g *globals) completer {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return askCell(g, toComplete, namespaceNames)
	}
}

// completeNodeFlag is completeNodes for a flag's value (--to, --node).
func completeNodeFlag(g *globals) completer {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return askCell(g, toComplete, nodeRefs)
	}
}

// wireCompletions gives every command that names a node, a workload, an
// allocation or a namespace its completer.
func wireCompletions(root *cobra.Command, g *globals) {
	root.RegisterFlagCompletionFunc("namespace", completeNamespaces(g))
	byPath := map[string]completer{
		"status": completeWorkloads(g), "allocs": completeWorkloads(g), "stop": completeWorkloads(g), "history": completeWorkloads(g),
		"revert": completeWorkloads(g), "services": completeWorkloads(g),
		"logs": completeAllocs(g), "alloc-status": completeAllocs(g), "alloc checkpoint": completeAllocs(g), "alloc migrate": completeAllocs(g),
		"node status": completeNodes(g), "node eligibility": completeNodes(g), "node drain": completeNodes(g),
		"node quarantine": completeNodes(g), "node purge": completeNodes(g),
		"namespace show": completeFrom(g, namespaceNames), "namespace delete": completeFrom(g, namespaceNames),
		"quota show": completeFrom(g, namespaceNames),
	}
	for path, fn := range byPath {
		cmd, _, err := root.Find(strings.Fields(path))
		if err != nil || cmd == root {
			panic("completion for a command that does not exist: " + path)
		}
		if cmd.ValidArgsFunction == nil {
			cmd.ValidArgsFunction = fn
		}
	}
	if cmd, _, err := root.Find([]string{"alloc", "migrate"}); err == nil {
		cmd.RegisterFlagCompletionFunc("to", completeNodeFlag(g))
	}
}

func namespaceNames(ctx context.Context, c *api.Client) ([]string, error) {
	list, err := c.Namespaces(ctx)
	var out []string
	for _, n := range list {
		out = append(out, n.Name)
	}
	return out, err
}
