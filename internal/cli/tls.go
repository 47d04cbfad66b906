package cli

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/pki"
)

// tlsFlags are a daemon's TLS files and the explicit way to go without.
type tlsFlags struct {
	ca, cert, key string
	plaintext     bool
}

func (f *tlsFlags) register(cmd *cobra.Command, whose string) {
	fl := cmd.Flags()
	fl.StringVar(&f.ca, "tls-ca", os.Getenv("STRATA_TLS_CA"), "the cell's CA certificate (strata tls ca create; default $STRATA_TLS_CA)")
	fl.StringVar(&f.cert, "tls-cert", os.Getenv("STRATA_TLS_CERT"), whose+"'s certificate (strata tls cert create; default $STRATA_TLS_CERT)")
	fl.StringVar(&f.key, "tls-key", os.Getenv("STRATA_TLS_KEY"), whose+"'s private key (default $STRATA_TLS_KEY)")
	fl.BoolVar(&f.plaintext, "insecure-plaintext", os.Getenv("STRATA_INSECURE_PLAINTEXT") == "1",
		"run without TLS: nothing encrypted, no peer authenticated (tests only; default $STRATA_INSECURE_PLAINTEXT=1)")
}

// files returns the TLS files, nil for plaintext, or an error saying what
// is missing.
func (f *tlsFlags) files() (*pki.Files, error) {
	given := f.ca != "" || f.cert != "" || f.key != ""
	switch {
	case f.plaintext && given:
		return nil, failf("--insecure-plaintext and --tls-* flags together: choose one")
	case f.plaintext:
		return nil, nil
	case !given:
		return nil, failf("no TLS: give --tls-ca, --tls-cert and --tls-key (make them with 'strata tls ca create' and 'strata tls cert create'), or --insecure-plaintext to run unencrypted (tests only)")
	case f.ca == "" || f.cert == "" || f.key == "":
		return nil, failf("TLS needs all of --tls-ca, --tls-cert and --tls-key")
	}
	return &pki.Files{CA: f.ca, Cert: f.cert, Key: f.key}, nil
}

// filesOrDev is files, except that with no --tls-* flag (and no
// --insecure-plaintext) a dev cell started in this directory lends its
// credentials of role, when it has them: the CLI finds them the same way
// (globals.client).
func (f *tlsFlags) filesOrDev(role pki.Role) (*pki.Files, error) {
	if f.ca == "" && f.cert == "" && f.key == "" && !f.plaintext {
		if d := pki.CertFiles(devTLSDir(devDataDir), role); fileExists(d.CA) && fileExists(d.Cert) && fileExists(d.Key) {
			return &d, nil
		}
	}
	return f.files()
}

// devTLSDir is where a dev cell keeps its CA and certificates.
func devTLSDir(root string) string { return filepath.Join(root, "tls") }

func newTLSCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tls",
		Short: "Make the cell's TLS credentials: a CA, and certificates for servers, agents and the CLI",
		Long: `Make the cell's TLS credentials with no external tool.

Servers, agents and the CLI authenticate each other with certificates of the
cell's CA; each certificate carries its role (server, agent or cli), and a
peer must hold the role its place needs: an agent's certificate cannot act as
a server's. The role, not the host name, identifies the peer.

  strata tls ca create --dir tls                       # tls/ca.pem, tls/ca-key.pem (keep the key offline)
  strata tls cert create --server --dir tls --ip 10.0.0.1 --dns s1.example
  strata tls cert create --agent --dir tls
  strata tls cert create --cli --dir tls
  strata server --tls-ca tls/ca.pem --tls-cert tls/server.pem --tls-key tls/server-key.pem ...
  export STRATA_CACERT=tls/ca.pem STRATA_CLIENT_CERT=tls/cli.pem STRATA_CLIENT_KEY=tls/cli-key.pem`,
	}
	ca := &cobra.Command{Use: "ca", Short: "The cell's certificate authority"}
	ca.AddCommand(newTLSCACreateCmd(g))
	cert := &cobra.Command{Use: "cert", Short: "Certificates of servers, agents and the CLI"}
	cert.AddCommand(newTLSCertCreateCmd(g))
	cmd.AddCommand(ca, cert)
	return cmd
}

func newTLSCACreateCmd(g *globals) *cobra.Command {
	var dir, name string
	var days int
	cmd := &cobra.Command{
		Use:     "create",
		Short:   "Create a CA in --dir (ca.pem and ca-key.pem); refuses to overwrite one",
		Example: "  strata tls ca create --dir /etc/strata/tls",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if days <= 0 {
				return failf("--days must be positive")
			}
			if err := pki.CreateCA(dir, name, time.Duration(days)*24*time.Hour); err != nil {
				return failf("%v", err)
			}
			c, k := pki.CAFiles(dir)
			fmt.Fprintf(g.stdout, "CA certificate %s\nCA key %s (0600; keep it off the cell's machines)\n", c, k)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", ".", "directory to write the CA to")
	cmd.Flags().StringVar(&name, "name", "Strata cell CA", "the CA's common name")
	cmd.Flags().IntVar(&days, "days", 3650, "validity in days")
	return cmd
}

func newTLSCertCreateCmd(g *globals) *cobra.Command {
	var server, agent, cli, scrape bool
	var dir, caDir, name string
	var dns []string
	var ips []net.IP
	var days int
	cmd := &cobra.Command{
		Use:   "create --server|--agent|--cli|--scrape",
		Short: "Issue a certificate of one role, signed by the CA in --ca-dir",
		Long: `Issue a certificate for a server, an agent, the CLI or a metrics scraper,
signed by the CA in --ca-dir, written to --dir as <role>.pem and <role>-key.pem
(0600). Servers and agents get localhost, 127.0.0.1 and ::1 unless --dns or
--ip are given.

A scrape certificate is Prometheus's: with it, a scraper reads the agents'
per-task /metrics over mutual TLS (and nothing else of theirs), and the
servers' /metrics (with a token of cell read when ACLs are on). See
docs/metrics.md.`,
		Example: `  strata tls cert create --server --ca-dir tls --dir tls --ip 10.0.0.1
  strata tls cert create --agent --ca-dir tls --dir /etc/strata/agent-tls
  strata tls cert create --scrape --ca-dir tls --dir /etc/prometheus/strata`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var role pki.Role
			n := 0
			for r, on := range map[pki.Role]bool{pki.RoleServer: server, pki.RoleAgent: agent, pki.RoleCLI: cli, pki.RoleScrape: scrape} {
				if on {
					role, n = r, n+1
				}
			}
			if n != 1 {
				return failf("give exactly one of --server, --agent, --cli, --scrape")
			}
			if days <= 0 {
				return failf("--days must be positive")
			}
			if caDir == "" {
				caDir = dir
			}
			f, err := pki.CreateCert(caDir, dir, pki.CertRequest{Role: role, Name: name, DNSNames: dns, IPs: ips,
				Validity: time.Duration(days) * 24 * time.Hour})
			if err != nil {
				return failf("%v", err)
			}
			fmt.Fprintf(g.stdout, "%s certificate %s\nkey %s\n", role, f.Cert, f.Key)
			return nil
		},
	}
	cmd.Flags().BoolVar(&server, "server", false, "a server's certificate")
	cmd.Flags().BoolVar(&agent, "agent", false, "an agent's certificate")
	cmd.Flags().BoolVar(&cli, "cli", false, "the CLI's certificate (a user's)")
	cmd.Flags().BoolVar(&scrape, "scrape", false, "a metrics scraper's certificate (Prometheus): reads /metrics only")
	cmd.Flags().StringVar(&dir, "dir", ".", "directory to write the certificate and key to")
	cmd.Flags().StringVar(&caDir, "ca-dir", "", "directory of the CA (default --dir)")
	cmd.Flags().StringVar(&name, "name", "", "common name (default <role>.strata)")
	cmd.Flags().StringSliceVar(&dns, "dns", nil, "DNS names the holder is reached by (repeatable)")
	cmd.Flags().IPSliceVar(&ips, "ip", nil, "IP addresses the holder is reached at (repeatable)")
	cmd.Flags().IntVar(&days, "days", 365, "validity in days")
	return cmd
}
