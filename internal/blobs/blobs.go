// Package blobs keeps the bytes the log only points to (uploaded files, embeds, generated images) in the
// deployment's JetStream object store. Events record a blob's name and digest; the bytes live here.
//
// It imports natsx for names and nothing else of Contrail's.
package blobs

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/natsx"
)

// ErrNotFound is returned for a blob that is not there.
var ErrNotFound = errors.New("blob not found")

// Store reads and writes blobs.
type Store struct {
	os jetstream.ObjectStore
}

// Open returns the deployment's blob store (natsx.Provision creates it).
func Open(ctx context.Context, js jetstream.JetStream, names natsx.Names) (*Store, error) {
	os, err := js.ObjectStore(ctx, names.ObjectStore())
	if err != nil {
		return nil, fmt.Errorf("open object store %s: %w", names.ObjectStore(), err)
	}
	return &Store{os: os}, nil
}

// Info is what the store knows of a blob.
type Info struct {
	Name   string
	Size   int64
	Digest string
}

// ErrInvalidName is returned for a name the platform never makes (its blobs are named "files/<account>/<id>" and
// "embeds/sha256-<hex>"). Object names become part of subjects: whatever reaches here from outside must be refused
// before it is sent, as a long subject makes the server close the connection.
var ErrInvalidName = errors.New("not a valid blob name")

func validName(name string) bool { return natsx.ValidKey(name, false) }

// Put stores r under name, streaming it in chunks, and returns its size and digest.
func (s *Store) Put(ctx context.Context, name, contentType string, r io.Reader) (Info, error) {
	if !validName(name) {
		return Info{}, fmt.Errorf("store blob %.80q: %w", name, ErrInvalidName)
	}
	meta := jetstream.ObjectMeta{Name: name}
	if contentType != "" {
		meta.Headers = map[string][]string{"Content-Type": {contentType}}
	}
	info, err := s.os.Put(ctx, meta, r)
	if err != nil {
		return Info{}, fmt.Errorf("store blob %s: %w", name, err)
	}
	return Info{Name: name, Size: int64(info.Size), Digest: info.Digest}, nil
}

// Get opens a blob for reading; the caller closes it. The reader checks the digest at the end.
func (s *Store) Get(ctx context.Context, name string) (io.ReadCloser, Info, error) {
	if !validName(name) {
		return nil, Info{}, fmt.Errorf("read blob %.80q: %w", name, ErrNotFound) // a name never made is not there
	}
	r, err := s.os.Get(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, Info{}, fmt.Errorf("read blob %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, Info{}, fmt.Errorf("read blob %s: %w", name, err)
	}
	oi, err := r.Info()
	if err != nil {
		_ = r.Close()
		return nil, Info{}, fmt.Errorf("read blob %s: %w", name, err)
	}
	return r, Info{Name: name, Size: int64(oi.Size), Digest: oi.Digest}, nil
}

// Delete removes a blob; a blob already gone is not an error.
func (s *Store) Delete(ctx context.Context, name string) error {
	if !validName(name) {
		return nil // a name the platform never makes: nothing to delete
	}
	err := s.os.Delete(ctx, name)
	if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("delete blob %s: %w", name, err)
	}
	return nil
}
