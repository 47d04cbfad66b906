// Package pki makes and loads the cell's TLS credentials: a certificate
// authority, and certificates for the roles that talk to each other
// (server, agent, cli, and scrape for a metrics scraper), with crypto/x509
// only. It builds the tls.Configs
// every side uses, each of which checks the peer's role as well as its
// chain: an agent's certificate cannot serve as a server's.
//
// The role is the certificate's organizational unit ("strata-server",
// "strata-agent", "strata-cli", "strata-scrape"). The package does no networking and never
// writes a private key with permissions wider than 0600.
package pki
