package api

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"
)

// TestBadAddressesFailAtOnce: an address the client cannot use fails the
// first call, without retries, with the fix.
func TestBadAddressesFailAtOnce(t *testing.T) {
	cases := []struct{ addr, want string }{
		{"htps://127.0.0.1:4680", `unknown scheme "htps": want http:// or https:// (did you mean https://?)`},
		{"htp://127.0.0.1:4680", `(did you mean http://?)`},
		{"ftp://127.0.0.1:4680", `unknown scheme "ftp"`},
		{"http://", "has no host"},
		{"http://127.0.0.1:4680,tcp://127.0.0.1:4681", `unknown scheme "tcp"`},
	}
	for _, tc := range cases {
		start := time.Now()
		_, _, err := NewClient(tc.addr).Nodes(context.Background(), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.addr, err, tc.want)
		}
		if time.Since(start) > time.Second {
			t.Errorf("%s: took %v", tc.addr, time.Since(start))
		}
	}
	for _, ok := range []string{"127.0.0.1:4680", "http://10.0.0.1:4680", "https://s1.example:4680/"} {
		if err := NewClient(ok).configErr; err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
}

func TestExplainPlaintextToTLS(t *testing.T) {
	e := &Error{StatusCode: 400, Message: "400 Bad Request: Client sent an HTTP request to an HTTPS server."}
	explainAnswer(e, "http://10.0.0.1:4680")
	if !strings.Contains(e.Message, "use https://10.0.0.1:4680") || !strings.Contains(e.Message, "$STRATA_CACERT") {
		t.Fatalf("message %q", e.Message)
	}
	other := &Error{StatusCode: 400, Message: "replicas: must be positive"}
	explainAnswer(other, "http://10.0.0.1:4680")
	if other.Message != "replicas: must be positive" {
		t.Fatalf("another 400 was changed: %q", other.Message)
	}
}

func TestCheckOwnCertificate(t *testing.T) {
	if err := checkOwnCertificate("x.pem", tls.Certificate{}, time.Now()); err != nil {
		t.Fatalf("no certificate: %v", err)
	}
	if err := checkOwnCertificate("x.pem", tls.Certificate{Certificate: [][]byte{{1, 2}}}, time.Now()); err == nil {
		t.Fatal("garbage accepted")
	}
}
