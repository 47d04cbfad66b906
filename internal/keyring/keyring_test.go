package keyring

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func newKeyring(t *testing.T) (*Keyring, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	k, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	return k, path
}

func TestSealOpenRoundTripProperty(t *testing.T) {
	k, _ := newKeyring(t)
	rapid.Check(t, func(rt *rapid.T) {
		plain := rapid.SliceOf(rapid.Byte()).Draw(rt, "plain")
		ctx := rapid.String().Draw(rt, "context")
		sealed, err := k.Seal(plain, ctx)
		if err != nil {
			rt.Fatal(err)
		}
		if len(plain) >= 4 && strings.Contains(sealed, string(plain)) {
			rt.Fatalf("sealed value %q shows the plaintext", sealed)
		}
		got, err := k.Open(sealed, ctx)
		if err != nil || string(got) != string(plain) {
			rt.Fatalf("Open = %q, %v; want %q", got, err, plain)
		}
		other := rapid.String().Filter(func(s string) bool { return s != ctx }).Draw(rt, "other")
		if _, err := k.Open(sealed, other); !errors.Is(err, ErrTampered) {
			rt.Fatalf("opened under another context: %v", err)
		}
	})
}

func TestOpenRefusesBadValues(t *testing.T) {
	k, _ := newKeyring(t)
	sealed, _ := k.Seal([]byte("hunter2"), "w/g/t/db")
	id, body, _ := strings.Cut(sealed, ":")
	// Flip one bit of the ciphertext itself: flipping a character of
	// the base64 text may make it invalid base64 (a malformed value,
	// not a tampered one), which made this test fail at random.
	raw, err := base64.RawStdEncoding.DecodeString(body)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 1
	flipped := base64.RawStdEncoding.EncodeToString(raw)
	tests := []struct {
		name, value string
		want        error
	}{
		{"no key id", body, ErrMalformed},
		{"not base64", id + ":%%%", ErrMalformed},
		{"too short", id + ":AAAA", ErrMalformed},
		{"unknown key", "deadbeef:" + body, ErrUnknownKey},
		{"altered", id + ":" + string(flipped), ErrTampered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := k.Open(tt.value, "w/g/t/db"); !errors.Is(err, tt.want) {
				t.Errorf("Open error %v, want %v", err, tt.want)
			}
		})
	}
}

func TestRotationKeepsOldValuesReadable(t *testing.T) {
	k, path := newKeyring(t)
	old, _ := k.Seal([]byte("v1"), "c")
	firstKey := k.Keys()[0].ID
	newID, err := k.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := k.Seal([]byte("v2"), "c")
	if !strings.HasPrefix(fresh, newID+":") || !strings.HasPrefix(old, firstKey+":") {
		t.Errorf("old %q new %q: want each under its key", old, fresh)
	}
	// Another process (the CLI) reads the file and finds both keys.
	again, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct{ sealed, want string }{{old, "v1"}, {fresh, "v2"}} {
		if got, err := again.Open(v.sealed, "c"); err != nil || string(got) != v.want {
			t.Errorf("Open after reload = %q, %v", got, err)
		}
	}
	if err := again.Remove(newID); !errors.Is(err, ErrActiveKey) {
		t.Errorf("removing the active key: %v", err)
	}
	if err := again.Remove(firstKey); err != nil {
		t.Fatal(err)
	}
	// The first keyring notices the file changed.
	if _, err := k.Open(old, "c"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("value under a removed key opened: %v", err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("keyring file mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestLoadRefusesReadableFile(t *testing.T) {
	_, path := newKeyring(t)
	os.Chmod(path, 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("Load of a 0644 keyring: %v", err)
	}
}
