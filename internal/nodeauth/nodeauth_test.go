package nodeauth

import (
	"errors"
	"testing"
	"time"
)

func TestSecretsAndVerifiers(t *testing.T) {
	s := NewSecret()
	if CheckNew(s) != "" || len(s) != 64 {
		t.Fatalf("NewSecret %q: %s", s, CheckNew(s))
	}
	v := Verifier(s)
	if v == s || !CheckSecret(s, v) || CheckSecret(NewSecret(), v) || CheckSecret("", v) || CheckSecret(s, "") {
		t.Fatal("CheckSecret accepts a wrong secret or refuses the right one")
	}
	for _, bad := range []string{"short", "has a space in it and is long enough to pass", string(make([]byte, 40))} {
		if CheckNew(bad) == "" {
			t.Errorf("CheckNew(%q) accepted", bad)
		}
	}
	if !Equal("abc", "abc") || Equal("abc", "abd") || Equal("", "") {
		t.Error("Equal")
	}
}

func TestLogRequestSignatures(t *testing.T) {
	secret, other := NewSecret(), NewSecret()
	now := time.Unix(1_700_000_000, 0)
	nonce := NewNonce(now)
	uri := "/v1/agent/allocations/a1/logs?task=t"
	sig := SignRequest(Verifier(secret), nonce, uri)
	cases := []struct {
		name          string
		secret, nonce string
		sig, uri      string
		at            time.Time
		want          error
	}{
		{"signed by the server", secret, nonce, sig, uri, now.Add(time.Second), nil},
		{"no signature", secret, nonce, "", uri, now, ErrNoSignature},
		{"another node's secret", other, nonce, sig, uri, now, ErrBadSignature},
		{"another request", secret, nonce, sig, uri + "&follow=true", now, ErrBadSignature},
		{"replayed later", secret, nonce, sig, uri, now.Add(MaxSkew + time.Second), ErrStaleNonce},
		{"nonce without a time", secret, "x.y", sig, uri, now, ErrStaleNonce},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := VerifyRequest(tc.secret, tc.nonce, tc.sig, tc.uri, tc.at); !errors.Is(err, tc.want) {
				t.Fatalf("VerifyRequest: %v, want %v", err, tc.want)
			}
		})
	}
	if !CheckProof(Verifier(secret), nonce, Prove(secret, nonce)) || CheckProof(Verifier(secret), nonce, Prove(other, nonce)) ||
		CheckProof(Verifier(secret), NewNonce(now), Prove(secret, nonce)) || CheckProof(Verifier(secret), nonce, "") {
		t.Fatal("CheckProof accepts a wrong proof or refuses the right one")
	}
}
