package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// sealInfo binds derived keys to this one use of the operator's secret.
const sealInfo = "contrail agent-token signing key v1"

// sealer seals private keys with AES-256-GCM under a key derived from the operator's secret. The kid is the
// additional data, so a sealed key cannot be passed off as another.
type sealer struct {
	secret []byte
}

func (s *sealer) aead(salt string) (cipher.AEAD, error) {
	rawSalt, err := base64.StdEncoding.DecodeString(salt)
	if err != nil {
		return nil, fmt.Errorf("signer: bad sealing salt: %w", err)
	}
	key, err := hkdf.Key(sha256.New, s.secret, rawSalt, sealInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("signer: derive sealing key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("signer: %w", err)
	}
	return cipher.NewGCM(block)
}

// seal returns base64(nonce || ciphertext) of plain.
func (s *sealer) seal(salt, kid string, plain []byte) (string, error) {
	aead, err := s.aead(salt)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.StdEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(kid))), nil
}

// open reverses seal. A wrong secret is reported as such: it is the one mistake an operator can make here.
func (s *sealer) open(salt, kid, box string) ([]byte, error) {
	aead, err := s.aead(salt)
	if err != nil {
		return nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(box)
	if err != nil || len(raw) < aead.NonceSize() {
		return nil, fmt.Errorf("signer: key %s: sealed private key is malformed", kid)
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(kid))
	if err != nil {
		return nil, errors.New("signer: cannot unseal the agent-token signing keys: CONTRAIL_SIGNING_SECRET differs from the secret they were sealed with (every node needs the same one)")
	}
	return plain, nil
}
