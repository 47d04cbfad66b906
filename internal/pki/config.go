package pki

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"

	"github.com/strata-dev/strata/api"
)

func roleNames(roles []Role) []string {
	var out []string
	for _, r := range roles {
		out = append(out, r.ou())
	}
	return out
}

// ServerConfig is the TLS configuration of a listener that presents this
// certificate. With require, a client must present a certificate of the
// cell's CA with one of clientRoles; without, a client may present none
// (a CLI user with a token), but one it presents is checked the same way.
func (f Files) ServerConfig(require bool, clientRoles ...Role) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, fmt.Errorf("load certificate %s: %w", f.Cert, err)
	}
	pool, err := api.LoadCAPool(f.CA)
	if err != nil {
		return nil, err
	}
	auth := tls.RequestClientCert
	if require {
		auth = tls.RequireAnyClientCert
	}
	names := roleNames(clientRoles)
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}, ClientAuth: auth,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 && !require {
				return nil
			}
			return api.VerifyPeer(cs.PeerCertificates, pool, x509.ExtKeyUsageClientAuth, names...)
		}}, nil
}

// ClientConfig is the TLS configuration of a side that dials a peer of
// role peer, presenting this certificate.
func (f Files) ClientConfig(peer Role) (*tls.Config, error) {
	return api.ClientTLS(f.CA, f.Cert, f.Key, peer.ou())
}

// Check loads the files and says what is wrong with them, early: a
// missing file, a key that does not match, a certificate not of this CA
// or not of role, or one expired.
func (f Files) Check(role Role) error {
	if f.CA == "" || f.Cert == "" || f.Key == "" {
		return fmt.Errorf("TLS needs a CA certificate, a certificate and its key (got ca=%q cert=%q key=%q)", f.CA, f.Cert, f.Key)
	}
	if _, err := tls.LoadX509KeyPair(f.Cert, f.Key); err != nil {
		return fmt.Errorf("certificate %s and key %s: %w", f.Cert, f.Key, err)
	}
	cert, err := readCert(f.Cert)
	if err != nil {
		return err
	}
	if got := RoleOf(cert); got != role {
		return fmt.Errorf("%s: %w: it is a %q certificate, this needs a %q one", f.Cert, api.ErrWrongRole, got, role)
	}
	pool, err := api.LoadCAPool(f.CA)
	if err != nil {
		return err
	}
	usage := x509.ExtKeyUsageServerAuth
	if role.clientOnly() {
		usage = x509.ExtKeyUsageClientAuth
	}
	if err := api.VerifyPeer([]*x509.Certificate{cert}, pool, usage, role.ou()); err != nil {
		return fmt.Errorf("%s: %w", f.Cert, err)
	}
	return nil
}
