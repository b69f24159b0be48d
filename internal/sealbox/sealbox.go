// Package sealbox seals small values with AES-256-GCM under a key derived (HKDF-SHA256) from the deployment's key
// material, the operator's secret when set, and a label naming the one use, so that each use has a key of its own:
// the MCP tools' headers in the log, the summaries of /v1/responses/compact. A box is nonce || ciphertext; what it is
// bound to (an account, a server) is GCM's additional data, so a box copied elsewhere does not open. How a box is
// written out (its encoding, a prefix) is the user's.
package sealbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// ErrMalformed is Open's error for a box too short to hold a nonce.
var ErrMalformed = errors.New("sealbox: the box is malformed")

// ErrNotOpened is Open's error for a box that does not open: altered, bound to something else, or sealed under
// another key.
var ErrNotOpened = errors.New("sealbox: the box does not open with this key and binding")

// Key seals and opens boxes for one use.
type Key struct{ aead cipher.AEAD }

// New derives the key of the use named label from material (the deployment's, 32 bytes or more) and secret (the
// operator's, may be empty).
func New(material []byte, secret, label string) (*Key, error) {
	if len(material) < 32 {
		return nil, errors.New("the sealing key material is shorter than 32 bytes")
	}
	key, err := hkdf.Key(sha256.New, append([]byte(secret), material...), nil, label, 32)
	if err != nil {
		return nil, fmt.Errorf("derive the sealing key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Key{aead: aead}, nil
}

// Seal returns plain sealed and bound to bound: a fresh nonce, then the ciphertext.
func (k *Key) Seal(plain, bound []byte) []byte {
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce) // crypto/rand.Read does not fail
	return k.aead.Seal(nonce, nonce, plain, bound)
}

// Open reverses Seal for a box bound to bound.
func (k *Key) Open(box, bound []byte) ([]byte, error) {
	n := k.aead.NonceSize()
	if len(box) < n {
		return nil, ErrMalformed
	}
	plain, err := k.aead.Open(nil, box[:n], box[n:], bound)
	if err != nil {
		return nil, ErrNotOpened
	}
	return plain, nil
}
