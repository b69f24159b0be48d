package client

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Sealer seals the headers of an mcp tool (tokens) for the log, with AES-256-GCM, so that no event holds them in
// clear; the node that runs the tool opens them.
type Sealer struct{ aead cipher.AEAD }

// sealInfo binds the derived key to this one use.
const sealInfo = "contrail mcp headers v1"

// NewSealer derives the sealing key from key material (the deployment's, 32 bytes or more) and, when given, the
// operator's secret.
func NewSealer(material []byte, secret string) (*Sealer, error) {
	if len(material) < 32 {
		return nil, errors.New("mcp headers: the sealing key material is shorter than 32 bytes")
	}
	key, err := hkdf.Key(sha256.New, append([]byte(secret), material...), nil, sealInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("mcp headers: derive the sealing key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Seal returns the headers sealed: base64(nonce || ciphertext).
func (s *Sealer) Seal(headers map[string]string) (string, error) {
	plain, err := json.Marshal(headers)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.StdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, nil)), nil
}

// Open reverses Seal; "" opens to no headers.
func (s *Sealer) Open(box string) (map[string]string, error) {
	if box == "" {
		return nil, nil
	}
	raw, err := base64.StdEncoding.DecodeString(box)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return nil, errors.New("mcp headers: the sealed headers are malformed")
	}
	plain, err := s.aead.Open(nil, raw[:s.aead.NonceSize()], raw[s.aead.NonceSize():], nil)
	if err != nil {
		return nil, errors.New("mcp headers: the sealed headers do not open with this deployment's key")
	}
	var h map[string]string
	if err := json.Unmarshal(plain, &h); err != nil {
		return nil, fmt.Errorf("mcp headers: %w", err)
	}
	return h, nil
}
