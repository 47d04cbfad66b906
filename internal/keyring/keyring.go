package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// FileName is the keyring's file in a server's data dir.
const FileName = "keyring.json"

// keySize is AES-256.
const keySize = 32

// Errors callers tell apart.
var (
	// ErrUnknownKey: a sealed value names a key this keyring lacks (the
	// servers of a cell do not share one keyring file).
	ErrUnknownKey = errors.New("sealed with a key this server's keyring does not hold")
	// ErrTampered: the value, or where it is used, is not what was sealed.
	ErrTampered = errors.New("sealed value fails authentication (altered, or moved from another secret)")
	// ErrMalformed: not a sealed value at all.
	ErrMalformed = errors.New("malformed sealed value")
	// ErrActiveKey: the active key cannot be removed.
	ErrActiveKey = errors.New("the active key cannot be removed; rotate first")
)

// Key is one key of a keyring.
type Key struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	Secret  []byte    `json:"key"` // 32 bytes, base64 in the file
}

// file is the on-disk form.
type file struct {
	Active string `json:"active"`
	Keys   []Key  `json:"keys"`
}

// Keyring is a set of keys, one active. It is safe for concurrent use and
// re-reads its file when the file changes (a rotation by another process).
type Keyring struct {
	path string
	rand io.Reader

	mu      sync.RWMutex
	f       file
	modTime time.Time
	aeads   map[string]cipher.AEAD
}

// LoadOrCreate reads the keyring at path, or creates one with a fresh key
// (0600) when there is none.
func LoadOrCreate(path string) (*Keyring, error) {
	k := &Keyring{path: path, rand: rand.Reader}
	err := k.load()
	if errors.Is(err, os.ErrNotExist) {
		if _, err := k.addKey(time.Now()); err != nil {
			return nil, err
		}
		return k, k.save()
	}
	return k, err
}

// Load reads the keyring at path, which must exist.
func Load(path string) (*Keyring, error) {
	k := &Keyring{path: path, rand: rand.Reader}
	return k, k.load()
}

func (k *Keyring) load() error {
	data, err := os.ReadFile(k.path)
	if err != nil {
		return fmt.Errorf("keyring %s: %w", k.path, err)
	}
	fi, err := os.Stat(k.path)
	if err != nil {
		return fmt.Errorf("keyring %s: %w", k.path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("keyring %s: mode %v lets others read it; chmod 600", k.path, fi.Mode().Perm())
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("keyring %s: %w", k.path, err)
	}
	aeads := map[string]cipher.AEAD{}
	for _, key := range f.Keys {
		a, err := newAEAD(key.Secret)
		if err != nil {
			return fmt.Errorf("keyring %s: key %s: %w", k.path, key.ID, err)
		}
		aeads[key.ID] = a
	}
	if _, ok := aeads[f.Active]; !ok {
		return fmt.Errorf("keyring %s: active key %q is not in the keyring", k.path, f.Active)
	}
	k.f, k.aeads, k.modTime = f, aeads, fi.ModTime()
	return nil
}

// refresh re-reads the file if it changed since it was read.
func (k *Keyring) refresh() {
	fi, err := os.Stat(k.path)
	k.mu.RLock()
	stale := err == nil && !fi.ModTime().Equal(k.modTime)
	k.mu.RUnlock()
	if stale {
		k.mu.Lock()
		if err := k.load(); err != nil {
			// Keep the keys in memory; the broken file is reported by
			// the next rotation or restart.
			_ = err
		}
		k.mu.Unlock()
	}
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != keySize {
		return nil, fmt.Errorf("key is %d bytes, want %d", len(key), keySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// addKey makes a new key the active one. The caller holds mu or owns k.
func (k *Keyring) addKey(now time.Time) (string, error) {
	secret := make([]byte, keySize)
	id := make([]byte, 4)
	if _, err := io.ReadFull(k.rand, secret); err != nil {
		return "", fmt.Errorf("new key: %w", err)
	}
	if _, err := io.ReadFull(k.rand, id); err != nil {
		return "", fmt.Errorf("new key: %w", err)
	}
	a, err := newAEAD(secret)
	if err != nil {
		return "", err
	}
	key := Key{ID: hex.EncodeToString(id), Created: now.UTC(), Secret: secret}
	if k.aeads == nil {
		k.aeads = map[string]cipher.AEAD{}
	}
	k.f.Keys = append(k.f.Keys, key)
	k.f.Active = key.ID
	k.aeads[key.ID] = a
	return key.ID, nil
}

// save writes the file atomically, 0600.
func (k *Keyring) save() error {
	data, err := json.MarshalIndent(k.f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(k.path), 0o700); err != nil {
		return fmt.Errorf("keyring %s: %w", k.path, err)
	}
	tmp := k.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("keyring %s: %w", k.path, err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("keyring %s: %w", k.path, err)
	}
	if err := os.Rename(tmp, k.path); err != nil {
		return fmt.Errorf("keyring %s: %w", k.path, err)
	}
	if fi, err := os.Stat(k.path); err == nil {
		k.modTime = fi.ModTime()
	}
	return nil
}

// Rotate adds a new key, makes it active and saves the file. Values
// sealed under older keys stay readable while their key is kept.
func (k *Keyring) Rotate() (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	id, err := k.addKey(time.Now())
	if err != nil {
		return "", err
	}
	return id, k.save()
}

// Remove drops a retired key. Values sealed under it can no longer be
// opened: resubmit their workloads (which seals them under the active
// key) first.
func (k *Keyring) Remove(id string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if id == k.f.Active {
		return ErrActiveKey
	}
	i := slices.IndexFunc(k.f.Keys, func(key Key) bool { return key.ID == id })
	if i < 0 {
		return fmt.Errorf("key %q: %w", id, ErrUnknownKey)
	}
	k.f.Keys = slices.Delete(k.f.Keys, i, i+1)
	delete(k.aeads, id)
	return k.save()
}

// KeyInfo describes a key without its secret.
type KeyInfo struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	Active  bool      `json:"active"`
}

// Keys lists the keys, oldest first.
func (k *Keyring) Keys() []KeyInfo {
	k.refresh()
	k.mu.RLock()
	defer k.mu.RUnlock()
	out := make([]KeyInfo, len(k.f.Keys))
	for i, key := range k.f.Keys {
		out[i] = KeyInfo{ID: key.ID, Created: key.Created, Active: key.ID == k.f.Active}
	}
	return out
}

// Seal encrypts plaintext under the active key, bound to context (where
// the value belongs). The result is "<key id>:<base64 nonce||ciphertext>".
func (k *Keyring) Seal(plaintext []byte, context string) (string, error) {
	k.refresh()
	k.mu.RLock()
	id, a := k.f.Active, k.aeads[k.f.Active]
	k.mu.RUnlock()
	nonce := make([]byte, a.NonceSize())
	if _, err := io.ReadFull(k.rand, nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := a.Seal(nonce, nonce, plaintext, []byte(context))
	return id + ":" + base64.RawStdEncoding.EncodeToString(out), nil
}

// Open decrypts a value sealed by Seal with the same context.
func (k *Keyring) Open(sealed, context string) ([]byte, error) {
	id, b64, ok := strings.Cut(sealed, ":")
	if !ok {
		return nil, ErrMalformed
	}
	data, err := base64.RawStdEncoding.DecodeString(b64)
	if err != nil {
		return nil, ErrMalformed
	}
	k.refresh() // rotated, copied in or pruned since it was read
	k.mu.RLock()
	a := k.aeads[id]
	k.mu.RUnlock()
	if a == nil {
		return nil, fmt.Errorf("key %q: %w", id, ErrUnknownKey)
	}
	if len(data) < a.NonceSize() {
		return nil, ErrMalformed
	}
	plain, err := a.Open(nil, data[:a.NonceSize()], data[a.NonceSize():], []byte(context))
	if err != nil {
		return nil, ErrTampered
	}
	return plain, nil
}
