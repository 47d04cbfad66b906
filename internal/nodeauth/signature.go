package nodeauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A server fetches a task's log from the agent of the allocation's node.
// Both sides prove themselves with the node secret's verifier as an HMAC
// key (the server stores the verifier, the agent computes it from its
// secret):
//
//   - the server sends a nonce (its clock and 16 random bytes) and a
//     signature of the nonce and the exact request URI; the agent serves
//     only a request signed so, with a nonce less than MaxSkew old;
//   - the agent answers with a proof over the same nonce; the server relays
//     nothing from an address that cannot give it. A registered address
//     that points at anything but that node's agent (the metadata service,
//     an internal API) yields an error, never its body.

// Headers of the log-stream handshake.
const (
	HeaderNonce     = "X-Strata-Log-Nonce"
	HeaderSignature = "X-Strata-Log-Signature"
	HeaderProof     = "X-Strata-Node-Proof"
)

// MaxSkew bounds how old (or how far in the future) a signed log request's
// nonce may be.
const MaxSkew = 5 * time.Minute

// Errors of VerifyRequest.
var (
	ErrNoSignature  = errors.New("the request is not signed by a server")
	ErrBadSignature = errors.New("the request's signature does not match this node's secret")
	ErrStaleNonce   = errors.New("the request's nonce is too old or from the future")
)

// NewNonce returns a nonce stamped with now.
func NewNonce(now time.Time) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return strconv.FormatInt(now.UnixNano(), 10) + "." + hex.EncodeToString(b[:])
}

func mac(key string, parts ...string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(m.Sum(nil))
}

// SignRequest is the server's signature of a log request to the node
// whose verifier is given.
func SignRequest(verifier, nonce, requestURI string) string {
	return mac(verifier, "strata log request", nonce, requestURI)
}

// VerifyRequest checks a log request's nonce and signature with the
// agent's own secret.
func VerifyRequest(secret, nonce, signature, requestURI string, now time.Time) error {
	if nonce == "" || signature == "" {
		return ErrNoSignature
	}
	stamp, _, _ := strings.Cut(nonce, ".")
	ns, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q has no time", ErrStaleNonce, nonce)
	}
	if d := now.Sub(time.Unix(0, ns)); d > MaxSkew || d < -MaxSkew {
		return fmt.Errorf("%w: %v apart from this agent's clock", ErrStaleNonce, d.Round(time.Second))
	}
	if !hmac.Equal([]byte(SignRequest(Verifier(secret), nonce, requestURI)), []byte(signature)) {
		return ErrBadSignature
	}
	return nil
}

// Prove is the agent's proof, over the server's nonce, that it holds the
// node's secret.
func Prove(secret, nonce string) string { return proof(Verifier(secret), nonce) }

func proof(verifier, nonce string) string { return mac(verifier, "strata log answer", nonce) }

// CheckProof is the server's check of an agent's answer.
func CheckProof(verifier, nonce, got string) bool {
	return got != "" && hmac.Equal([]byte(proof(verifier, nonce)), []byte(got))
}
