package api

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/strata-dev/strata/internal/suggest"
)

// Mistakes a person makes reaching a cell, which no retry can fix: the
// client says so at once, with the fix, instead of retrying for RetryFor.
// docs/operations.md lists each with the error it gives.

// ErrNoQuorum is wrapped by the error of a call that no server of the
// cell could answer because none leads and the servers that answered say
// they have known no leader for long (code CodeNoQuorum): a majority of
// the cell's voting servers is down or cut off.
var ErrNoQuorum = errors.New("the cell has no leader: a majority of its voting servers is down or unreachable")

// noQuorumError is the servers' own answer (which says for how long and
// how many servers a leader needs), recognised as ErrNoQuorum.
type noQuorumError struct{ err error }

func (e *noQuorumError) Error() string        { return e.err.Error() }
func (e *noQuorumError) Unwrap() error        { return e.err }
func (e *noQuorumError) Is(target error) bool { return target == ErrNoQuorum }

// CodeNoQuorum is the code of a server's 503 when it has known no leader
// for far longer than an election takes.
const CodeNoQuorum = "no-quorum"

// CodeServerPort is the code of the answer a server's --raft-addr port
// gives an HTTP request: the API is on --http-addr.
const CodeServerPort = "server-port"

// checkAddr refuses a server address the client cannot use.
func checkAddr(addr string) error {
	u, err := url.Parse(addr)
	if err != nil {
		return fmt.Errorf("server address %q: %w", addr, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		hint := ""
		if s := suggest.Closest(u.Scheme, []string{"https", "http"}); s != "" {
			hint = fmt.Sprintf(" (did you mean %s://?)", s)
		}
		return fmt.Errorf("server address %q: unknown scheme %q: want http:// or https://%s", addr, u.Scheme, hint)
	}
	if u.Host == "" {
		return fmt.Errorf("server address %q has no host: want http://HOST:PORT or https://HOST:PORT", addr)
	}
	return nil
}

// checkOwnCertificate refuses a client certificate that is expired or not
// yet valid: the server would refuse every handshake with a bare "bad
// certificate", which says nothing of why.
func checkOwnCertificate(file string, pair tls.Certificate, now time.Time) error {
	if len(pair.Certificate) == 0 {
		return nil
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return fmt.Errorf("certificate %s: %w", file, err)
	}
	switch {
	case now.After(cert.NotAfter):
		return fmt.Errorf("certificate %s expired at %s (%s ago): issue a new one with 'strata tls cert create' and point $STRATA_CLIENT_CERT and $STRATA_CLIENT_KEY at it",
			file, cert.NotAfter.UTC().Format(time.RFC3339), now.Sub(cert.NotAfter).Round(time.Minute))
	case now.Before(cert.NotBefore):
		return fmt.Errorf("certificate %s is not valid before %s: check this machine's clock", file, cert.NotBefore.UTC().Format(time.RFC3339))
	}
	return nil
}

// hopeless reports whether a transport error will not change on a retry
// or on another server, and says what to do about it.
func hopeless(err error, addr string) (string, bool) {
	var opErr *net.OpError
	var rec tls.RecordHeaderError
	var unknown x509.UnknownAuthorityError
	switch {
	case errors.As(err, &opErr) && opErr.Op == "remote error":
		// A TLS alert: the server refused this client's certificate.
		return "the server refused this client's certificate ($STRATA_CLIENT_CERT): it is expired, not of this cell's CA, or not a cli certificate; issue one with 'strata tls cert create --cli'", true
	case errors.As(err, &rec) || errors.Is(err, http.ErrSchemeMismatch):
		return addr + " answered in plain text, not TLS: it is a plaintext server (use http://) or a server's --raft-addr port (the API is on its --http-addr)", true
	case errors.As(err, &unknown):
		return "the server's certificate is not signed by a CA this client trusts: set $STRATA_CACERT to the cell's CA certificate (ca.pem)", true
	}
	return "", false
}

// plaintextToTLS is what a Go HTTPS server answers a plain HTTP request.
const plaintextToTLS = "Client sent an HTTP request to an HTTPS server"

// explainAnswer adds the fix to an error answer that comes from a mistake
// in how the server was reached.
func explainAnswer(e *Error, addr string) {
	if e.StatusCode == 400 && strings.Contains(e.Message, plaintextToTLS) {
		https := "https://" + strings.TrimPrefix(addr, "http://")
		e.Message = fmt.Sprintf("%s speaks HTTPS: use %s, and give the cell's CA certificate in $STRATA_CACERT (and a client certificate in $STRATA_CLIENT_CERT and $STRATA_CLIENT_KEY if the cell asks for one)", addr, https)
		e.Code = "plaintext-to-tls"
	}
}
