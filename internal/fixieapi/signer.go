package fixieapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/natsx"
)

// secretBucket holds the key that signs embed URLs, shared by every node.
const secretBucket = "fixie_secrets"

// secretKey is the KV key of the embed URL signing secret.
const secretKey = "embed-url-hmac"

// SecretsBucketSpec is the bucket of the embed URL signing secret; the platform provisions it.
func SecretsBucketSpec() natsx.BucketSpec {
	return natsx.BucketSpec{Name: secretBucket, Description: "Contrail: the secret that signs embed URLs"}
}

// DefaultURLTTL is how long a signed embed URL works.
const DefaultURLTTL = time.Hour

// Signer signs and checks embed URLs: HMAC-SHA256 over the embed ID and the expiry, with a secret created once (KV
// Create, so concurrent first starts agree) and shared by every node. A URL needs no API key: its signature is the
// permission, until it expires.
type Signer struct {
	js     jetstream.JetStream
	layout natsx.Layout
	base   string
	ttl    time.Duration
	now    func() time.Time

	mu     sync.Mutex
	secret []byte
}

// NewSigner returns a signer of URLs under publicURL (the platform's public base URL).
func NewSigner(js jetstream.JetStream, layout natsx.Layout, publicURL string, ttl time.Duration, now func() time.Time) *Signer {
	if ttl <= 0 {
		ttl = DefaultURLTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Signer{js: js, layout: layout, base: strings.TrimRight(publicURL, "/"), ttl: ttl, now: now}
}

func (s *Signer) key(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.secret != nil {
		return s.secret, nil
	}
	kv, err := s.js.KeyValue(ctx, s.layout.Names.Bucket(secretBucket))
	if err != nil {
		return nil, fmt.Errorf("open secrets bucket: %w", err)
	}
	fresh := []byte(events.RandomToken(32))
	if _, err := kv.Create(ctx, secretKey, fresh); err == nil {
		s.secret = fresh
		return s.secret, nil
	} else if !errors.Is(err, jetstream.ErrKeyExists) {
		return nil, fmt.Errorf("create embed signing secret: %w", err)
	}
	e, err := kv.Get(ctx, secretKey)
	if err != nil {
		return nil, fmt.Errorf("read embed signing secret: %w", err)
	}
	s.secret = e.Value()
	return s.secret, nil
}

func mac(secret []byte, embedID string, exp int64) string {
	h := hmac.New(sha256.New, secret)
	fmt.Fprintf(h, "embed\x00%s\x00%d", embedID, exp)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// EmbedURL returns a signed URL that serves an embed's bytes until it expires.
func (s *Signer) EmbedURL(ctx context.Context, embedID string) (string, error) {
	secret, err := s.key(ctx)
	if err != nil {
		return "", err
	}
	exp := s.now().Add(s.ttl).Unix()
	q := url.Values{"exp": {strconv.FormatInt(exp, 10)}, "sig": {mac(secret, embedID, exp)}}
	return s.base + EmbedContentPath(embedID) + "?" + q.Encode(), nil
}

// EmbedContentPath is where an embed's bytes are served.
func EmbedContentPath(embedID string) string {
	return "/api/embeds/" + url.PathEscape(embedID) + "/content"
}

// Verify checks a signed URL's expiry and signature.
func (s *Signer) Verify(ctx context.Context, embedID, exp, sig string) error {
	secret, err := s.key(ctx)
	if err != nil {
		return err
	}
	at, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || sig == "" {
		return errs.E(errs.Forbidden, "this embed URL is not signed: ask for the embed again to get a signed URL")
	}
	if !hmac.Equal([]byte(sig), []byte(mac(secret, embedID, at))) {
		return errs.E(errs.Forbidden, "this embed URL's signature is not valid")
	}
	if s.now().Unix() > at {
		return errs.E(errs.Forbidden, "this embed URL expired at %s: ask for the embed again to get a fresh one", time.Unix(at, 0).UTC().Format(time.RFC3339))
	}
	return nil
}
