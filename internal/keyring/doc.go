// Package keyring seals and opens workload secrets with AES-256-GCM under a
// keyring kept in a file of the server's data dir (keyring.json, 0600). A
// keyring holds several keys, one of them active: sealing always uses the
// active key, opening uses whichever key a sealed value names, so a key can
// be rotated (a new active key added) without making older values
// unreadable. Every value is bound to where it belongs (its workload,
// group, task and name) as additional authenticated data, so a sealed value
// cannot be moved to another workload's secret.
//
// It owns the file format and the cryptography only: it never decides who
// may read a secret, and it never logs a key or a plaintext.
package keyring
