package api

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"
)

// Roles of a cell's certificates, as their organizational unit carries
// them (internal/pki makes them).
const (
	TLSRoleServer = "strata-server"
	TLSRoleAgent  = "strata-agent"
	TLSRoleCLI    = "strata-cli"
	// TLSRoleScrape is a metrics scraper's: agents serve it /metrics only.
	TLSRoleScrape = "strata-scrape"
)

// ErrWrongRole is wrapped by a TLS error for a peer whose certificate is
// the cell's but for another role (an agent's certificate offered as a
// server's).
var ErrWrongRole = errors.New("certificate is for the wrong role")

// ClientTLS returns a TLS configuration that trusts only the CA in caFile
// and accepts only a peer whose certificate has role peerRole; certFile
// and keyFile, when set, are this side's certificate (mutual TLS).
//
// The peer is identified by its role in the cell's CA, not by its host
// name: servers and agents are dialled by address, and a certificate says
// what its holder is.
func ClientTLS(caFile, certFile, keyFile, peerRole string) (*tls.Config, error) {
	pool, err := LoadCAPool(caFile)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true, // VerifyConnection below verifies the chain
		VerifyConnection: func(cs tls.ConnectionState) error {
			return VerifyPeer(cs.PeerCertificates, pool, x509.ExtKeyUsageServerAuth, peerRole)
		}}
	if certFile != "" || keyFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("load certificate %s: %w", certFile, err)
		}
		if err := checkOwnCertificate(certFile, pair, time.Now()); err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// LoadCAPool reads a PEM CA certificate file into a pool.
func LoadCAPool(caFile string) (*x509.CertPool, error) {
	b, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("read CA certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", caFile)
	}
	return pool, nil
}

// VerifyPeer checks a peer's certificate chain against pool, for usage,
// and that its role is one of roles.
func VerifyPeer(chain []*x509.Certificate, pool *x509.CertPool, usage x509.ExtKeyUsage, roles ...string) error {
	if len(chain) == 0 {
		return errors.New("the peer sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	leaf := chain[0]
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
		var unknown x509.UnknownAuthorityError
		if errors.As(err, &unknown) {
			return fmt.Errorf("peer certificate %q is not signed by this cell's CA: %w", leaf.Subject.CommonName, err)
		}
		return fmt.Errorf("peer certificate %q: %w", leaf.Subject.CommonName, err)
	}
	for _, ou := range leaf.Subject.OrganizationalUnit {
		if slices.Contains(roles, ou) {
			return nil
		}
	}
	return fmt.Errorf("%w: peer certificate %q has role %v, want %v", ErrWrongRole, leaf.Subject.CommonName, leaf.Subject.OrganizationalUnit, roles)
}
