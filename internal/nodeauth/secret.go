package nodeauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
)

// MinSecretLen is the shortest node secret or join token accepted: 128
// bits as hex. NewSecret makes 256.
const MinSecretLen = 32

// NewSecret returns 32 random bytes as hex: a node secret or a join token.
func NewSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // does not fail on Linux
	}
	return hex.EncodeToString(b[:])
}

// Verifier is what the cell stores for a node secret: a hash from which
// the secret cannot be recovered, so a copy of the state (a snapshot file)
// does not let its reader act as the node. It is also the key of the
// log-stream signatures (signature.go), which both sides can compute.
func Verifier(secret string) string {
	h := sha256.Sum256([]byte("strata node secret\x00" + secret))
	return hex.EncodeToString(h[:])
}

// CheckSecret reports whether secret is the one verifier was made from, in
// time that does not depend on where they differ.
func CheckSecret(secret, verifier string) bool {
	if secret == "" || verifier == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(Verifier(secret)), []byte(verifier)) == 1
}

// Equal compares two secrets (a join token against the cell's) in time
// that depends on neither.
func Equal(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return a != "" && b != "" && hmac.Equal(ha[:], hb[:])
}

// CheckNew says what is wrong with a secret an agent offers for a new node
// ("" when nothing is).
func CheckNew(secret string) string {
	if len(secret) < MinSecretLen {
		return fmt.Sprintf("is %d characters long; a node secret has at least %d", len(secret), MinSecretLen)
	}
	if len(secret) > 256 {
		return fmt.Sprintf("is %d characters long, more than 256", len(secret))
	}
	for i := 0; i < len(secret); i++ {
		if c := secret[i]; c <= ' ' || c > '~' {
			return fmt.Sprintf("has byte %#02x at %d; a node secret is printable ASCII", c, i)
		}
	}
	return ""
}
