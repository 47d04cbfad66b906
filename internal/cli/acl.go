package cli

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api"
)

func newACLCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "acl",
		Short: "Bootstrap ACLs and manage their policies and tokens",
		Long: `ACLs decide who may do what (docs/security.md). With the servers started with
--acl, every request but the status endpoints needs a token, given as
STRATA_TOKEN or --token, whose policies grant what the request does.

Capabilities, per namespace ("*": every namespace):
  read     list and read workloads, allocations, evaluations, events
  submit   register, update, stop and purge workloads
  logs     read tasks' logs
and on the cell:
  read          nodes, the cell config, the raft configuration
  node-operate  drain and operate nodes
  cell-manage   the cell config, raft peers, snapshots
  acl-admin     policies and tokens

  strata acl bootstrap                         # once per cell: the first management token
  strata acl policy apply -f dev.yaml          # a policy (YAML or JSON)
  strata acl token create --name ci --policy dev --ttl 720h
  strata acl token list -o json
  strata acl token revoke ACCESSOR`,
	}
	policy := &cobra.Command{Use: "policy", Short: "Manage ACL policies"}
	policy.AddCommand(newACLPolicyApplyCmd(g), newACLPolicyListCmd(g), newACLPolicyGetCmd(g), newACLPolicyDeleteCmd(g))
	token := &cobra.Command{Use: "token", Short: "Manage ACL tokens"}
	token.AddCommand(newACLTokenCreateCmd(g), newACLTokenListCmd(g), newACLTokenGetCmd(g), newACLTokenRevokeCmd(g), newACLTokenSelfCmd(g))
	cmd.AddCommand(newACLBootstrapCmd(g), policy, token)
	return cmd
}

func newACLBootstrapCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bootstrap",
		Short: "Create the cell's first management token (works once per cell)",
		Long: `Create the cell's first management token: it may do everything, and its secret
is shown only now. Keep it safe; make tokens with narrower policies for daily
use. A second bootstrap is refused.`,
		Example: "  export STRATA_TOKEN=$(strata acl bootstrap -o json | jq -r .secretId)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			tok, err := g.client().ACLBootstrap(cmd.Context())
			if err != nil {
				return failf("%v", err)
			}
			return printToken(g, tok)
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func printToken(g *globals, t *api.ACLToken) error {
	if g.structured() {
		return g.printData(t)
	}
	tw := newTable(g.stdout)
	tw.row("Accessor ID:", t.AccessorID)
	if t.SecretID != "" {
		tw.row("Secret ID:", t.SecretID+"   (shown once)")
	}
	tw.row("Name:", t.Name)
	tw.row("Policies:", strings.Join(t.Policies, ", "))
	tw.row("Management:", fmt.Sprint(t.Management))
	tw.row("Created:", t.CreateTime.Format(time.RFC3339))
	if t.ExpiresAt != nil {
		tw.row("Expires:", t.ExpiresAt.Format(time.RFC3339))
	}
	if t.Revoked {
		tw.row("Revoked:", t.RevokeTime.Format(time.RFC3339))
	}
	return tw.flush()
}

func newACLPolicyApplyCmd(g *globals) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "apply -f FILE",
		Short: "Create or replace a policy from a YAML or JSON file",
		Long: `Create or replace a policy. A policy file looks like this:

  name: dev
  description: developers of the default namespace
  namespaces:
    default: [read, submit, logs]
  cell: [read]`,
		Example: "  strata acl policy apply -f dev.yaml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			b, err := os.ReadFile(file)
			if err != nil {
				return failf("-f: %v", err)
			}
			var p api.ACLPolicy
			if err := yaml.UnmarshalStrict(b, &p); err != nil {
				return failf("%s: %v", file, err)
			}
			out, err := g.client().ApplyACLPolicy(cmd.Context(), &p)
			if err != nil {
				return failf("%v", err)
			}
			if g.structured() {
				return g.printData(out)
			}
			fmt.Fprintf(g.stdout, "policy %s applied\n", out.Name)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "policy file (YAML or JSON)")
	cmd.MarkFlagRequired("file")
	addOutputFlag(cmd, g)
	return cmd
}

func newACLPolicyListCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use: "list", Short: "List the policies", Args: cobra.NoArgs,
		Example: "  strata acl policy list -o json",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			list, err := g.client().ACLPolicies(cmd.Context())
			if err != nil {
				return failf("%v", err)
			}
			return printListing(g, list, []column[*api.ACLPolicy]{
				{header: "NAME", cell: func(p *api.ACLPolicy) string { return p.Name }},
				{header: "NAMESPACES", cell: func(p *api.ACLPolicy) string {
					var ns []string
					for n, caps := range p.Namespaces {
						ns = append(ns, n+"="+strings.Join(caps, "+"))
					}
					sort.Strings(ns)
					return orDash(strings.Join(ns, ","))
				}},
				{header: "CELL", cell: func(p *api.ACLPolicy) string { return orDash(strings.Join(p.Cell, ",")) }},
				{header: "DESCRIPTION", cell: func(p *api.ACLPolicy) string { return orDash(p.Description) }},
			})
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newACLPolicyGetCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use: "get NAME", Short: "Show one policy (YAML, or -o json)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			p, err := g.client().ACLPolicy(cmd.Context(), args[0])
			if err != nil {
				return failf("%v", err)
			}
			if g.structured() {
				return g.printData(p)
			}
			b, err := yaml.Marshal(p)
			if err != nil {
				return err
			}
			_, err = g.stdout.Write(b)
			return err
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func newACLPolicyDeleteCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "delete NAME", Short: "Delete a policy; tokens that name it lose what it granted", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.client().DeleteACLPolicy(cmd.Context(), args[0]); err != nil {
				return failf("%v", err)
			}
			fmt.Fprintf(g.stdout, "policy %s deleted\n", args[0])
			return nil
		},
	}
}

func newACLTokenCreateCmd(g *globals) *cobra.Command {
	var req api.ACLTokenRequest
	cmd := &cobra.Command{
		Use:   "create --name NAME --policy P [--policy P2] [--ttl 720h]",
		Short: "Create a token; its secret is shown once",
		Example: `  strata acl token create --name ci --policy deployer --ttl 720h
  strata acl token create --name ops --management -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			tok, err := g.client().CreateACLToken(cmd.Context(), &req)
			if err != nil {
				return failf("%v", err)
			}
			return printToken(g, tok)
		},
	}
	cmd.Flags().StringVar(&req.Name, "name", "", "whose token it is (shown in listings and the audit log)")
	cmd.Flags().StringArrayVar(&req.Policies, "policy", nil, "a policy the token holds (repeatable)")
	cmd.Flags().StringVar(&req.TTL, "ttl", "", "lifetime, e.g. 720h (default: until revoked)")
	cmd.Flags().BoolVar(&req.Management, "management", false, "a management token: every capability, everywhere")
	addOutputFlag(cmd, g)
	return cmd
}

func newACLTokenListCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use: "list", Short: "List the tokens (never their secrets)", Args: cobra.NoArgs,
		Example: "  strata acl token list -o json",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			list, err := g.client().ACLTokens(cmd.Context())
			if err != nil {
				return failf("%v", err)
			}
			return printListing(g, list, []column[*api.ACLToken]{
				{header: "ACCESSOR", cell: func(t *api.ACLToken) string { return t.AccessorID }},
				{header: "NAME", cell: func(t *api.ACLToken) string { return t.Name }},
				{header: "POLICIES", cell: func(t *api.ACLToken) string { return orDash(strings.Join(t.Policies, ",")) }},
				{header: "MANAGEMENT", cell: func(t *api.ACLToken) string { return fmt.Sprint(t.Management) }},
				{header: "CREATED", wide: true, cell: func(t *api.ACLToken) string { return t.CreateTime.Format(time.RFC3339) }},
				{header: "EXPIRES", cell: func(t *api.ACLToken) string {
					if t.ExpiresAt == nil {
						return "-"
					}
					return t.ExpiresAt.Format(time.RFC3339)
				}},
				{header: "REVOKED", cell: func(t *api.ACLToken) string { return fmt.Sprint(t.Revoked) }},
			})
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func newACLTokenGetCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use: "get ACCESSOR", Short: "Show one token by its accessor id", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			tok, err := g.client().ACLToken(cmd.Context(), args[0])
			if err != nil {
				return failf("%v", err)
			}
			return printToken(g, tok)
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func newACLTokenSelfCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use: "self", Short: "Show the token this CLI sends", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			tok, err := g.client().ACLTokenSelf(cmd.Context())
			if err != nil {
				return failf("%v", err)
			}
			return printToken(g, tok)
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func newACLTokenRevokeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "revoke ACCESSOR", Short: "Revoke a token: every later request with it is refused", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.client().RevokeACLToken(cmd.Context(), args[0]); err != nil {
				return failf("%v", err)
			}
			fmt.Fprintf(g.stdout, "token %s revoked\n", args[0])
			return nil
		},
	}
}
