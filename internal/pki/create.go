package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Role is what a certificate may be used as.
type Role string

// The roles of a cell's certificates.
const (
	RoleServer Role = "server"
	RoleAgent  Role = "agent"
	RoleCLI    Role = "cli"
	// RoleScrape is a metrics scraper's (Prometheus): it may read the
	// agents' /metrics over mutual TLS and nothing else of theirs.
	RoleScrape Role = "scrape"
)

// ou is the organizational unit that carries a role.
func (r Role) ou() string { return "strata-" + string(r) }

// Roles lists the valid roles.
var Roles = []Role{RoleServer, RoleAgent, RoleCLI, RoleScrape}

// clientOnly reports whether a role's holder only dials (the CLI, a
// scraper): its certificate is for client authentication and names no
// host.
func (r Role) clientOnly() bool { return r == RoleCLI || r == RoleScrape }

// RoleOf returns the role of a certificate, "" if it has none.
func RoleOf(c *x509.Certificate) Role {
	for _, ou := range c.Subject.OrganizationalUnit {
		for _, r := range Roles {
			if ou == r.ou() {
				return r
			}
		}
	}
	return ""
}

// Files names a PEM CA certificate, and a certificate and its key.
type Files struct {
	CA, Cert, Key string
}

// CAFiles are the file names CreateCA writes in a directory.
func CAFiles(dir string) (cert, key string) {
	return filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")
}

// CertFiles are the file names CreateCert writes for role in a directory.
func CertFiles(dir string, role Role) Files {
	ca, _ := CAFiles(dir)
	return Files{CA: ca, Cert: filepath.Join(dir, string(role)+".pem"), Key: filepath.Join(dir, string(role)+"-key.pem")}
}

func newKey() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

func serial() (*big.Int, error) { return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)) }

// CreateCA writes a new certificate authority to dir (ca.pem, ca-key.pem)
// valid for validity. It refuses to overwrite one.
func CreateCA(dir, name string, validity time.Duration) error {
	certPath, keyPath := CAFiles(dir)
	if _, err := os.Stat(keyPath); err == nil {
		return fmt.Errorf("%s exists: a CA is there already", keyPath)
	}
	key, err := newKey()
	if err != nil {
		return err
	}
	sn, err := serial()
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: sn, Subject: pkix.Name{CommonName: name, Organization: []string{"Strata"}},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(validity), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature, MaxPathLenZero: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("create CA certificate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return writePair(certPath, keyPath, der, key)
}

// CertRequest describes a certificate to issue.
type CertRequest struct {
	Role     Role
	Name     string   // common name; default "<role>.strata"
	DNSNames []string // the names a server or agent is reached by (default localhost)
	IPs      []net.IP // its addresses (default 127.0.0.1 and ::1)
	Validity time.Duration
	// NotBefore, when set, backdates the certificate (tests of expiry).
	NotBefore time.Time
}

// CreateCert issues a certificate signed by the CA in caDir and writes it
// to outDir as <role>.pem and <role>-key.pem.
func CreateCert(caDir, outDir string, req CertRequest) (Files, error) {
	if RoleOf(&x509.Certificate{Subject: pkix.Name{OrganizationalUnit: []string{req.Role.ou()}}}) == "" {
		return Files{}, fmt.Errorf("role %q: want server, agent, cli or scrape", req.Role)
	}
	caCert, caKey, err := loadCA(caDir)
	if err != nil {
		return Files{}, err
	}
	key, err := newKey()
	if err != nil {
		return Files{}, err
	}
	sn, err := serial()
	if err != nil {
		return Files{}, err
	}
	if req.Name == "" {
		req.Name = string(req.Role) + ".strata"
	}
	if len(req.DNSNames) == 0 && !req.Role.clientOnly() {
		req.DNSNames = []string{"localhost"}
	}
	if len(req.IPs) == 0 && !req.Role.clientOnly() {
		req.IPs = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	start := req.NotBefore
	if start.IsZero() {
		start = time.Now().Add(-time.Minute)
	}
	usage := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if !req.Role.clientOnly() {
		usage = append(usage, x509.ExtKeyUsageServerAuth) // servers and agents serve, and dial
	}
	tmpl := &x509.Certificate{SerialNumber: sn,
		Subject:   pkix.Name{CommonName: req.Name, Organization: []string{"Strata"}, OrganizationalUnit: []string{req.Role.ou()}},
		NotBefore: start, NotAfter: start.Add(req.Validity), DNSNames: req.DNSNames, IPAddresses: req.IPs,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return Files{}, fmt.Errorf("create %s certificate: %w", req.Role, err)
	}
	if err := os.MkdirAll(outDir, 0o700); err != nil {
		return Files{}, err
	}
	f := CertFiles(outDir, req.Role)
	f.CA, _ = CAFiles(caDir)
	return f, writePair(f.Cert, f.Key, der, key)
}

func loadCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPath, keyPath := CAFiles(dir)
	cert, err := readCert(certPath)
	if err != nil {
		return nil, nil, err
	}
	b, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, fmt.Errorf("CA key: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, nil, fmt.Errorf("%s: no PEM block", keyPath)
	}
	key, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", keyPath, err)
	}
	return cert, key, nil
}

func readCert(path string) (*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s: not a PEM certificate", path)
	}
	return x509.ParseCertificate(block.Bytes)
}

func writePair(certPath, keyPath string, der []byte, key *ecdsa.PrivateKey) error {
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

// EnsureDev makes, once, the credentials of a dev cell in dir: a CA and a
// server, an agent and a cli certificate, all for localhost. Later calls
// keep them.
func EnsureDev(dir string) error {
	if _, err := os.Stat(CertFiles(dir, RoleCLI).Key); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if _, key := CAFiles(dir); !exists(key) {
		if err := CreateCA(dir, "Strata dev CA", 10*365*24*time.Hour); err != nil {
			return err
		}
	}
	for _, r := range Roles {
		if _, err := CreateCert(dir, dir, CertRequest{Role: r, Validity: 5 * 365 * 24 * time.Hour}); err != nil {
			return err
		}
	}
	return nil
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }
