package commands_test

import (
	"context"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/domain/container"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestAddingAFileTheContainerHoldsAnswersItAsAdded: adding a file the container holds already appends nothing and
// answers the file as it was first added, whether the caller's loaded container holds it or another request added
// it after the caller loaded the container.
func TestAddingAFileTheContainerHoldsAnswersItAsAdded(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	p, _ := n.NewAccount(t, "ada")
	ctx := context.Background()
	up, err := n.Commands.Files.StoreUpload(ctx, p, "text/csv", strings.NewReader("region,amount\nnorth,10\n"))
	if err != nil {
		t.Fatal(err)
	}
	fileID, _, err := n.Commands.Files.Create(ctx, p, commands.NewFile{Filename: "sales.csv", Purpose: "assistants", Upload: up})
	if err != nil {
		t.Fatal(err)
	}
	c := n.Commands.Containers
	id, _, err := c.Create(ctx, p, "box", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	load := func() (container.State, uint64) {
		t.Helper()
		s, err := c.Get(ctx, p.AccountID, id, eventstore.Fresh)
		if err != nil {
			t.Fatal(err)
		}
		return s, s.Seq
	}
	same := func(what string, got, want container.File) {
		t.Helper()
		if got.ContainerFileAdded != want.ContainerFileAdded || !got.CreatedAt.Equal(want.CreatedAt) {
			t.Errorf("%s: %+v, want %+v", what, got, want)
		}
	}

	stale, _ := load()
	s, _ := load()
	first, err := c.AddFile(ctx, p, &s, fileID)
	if err != nil || first.FileID != fileID || first.Path != "/mnt/data/sales.csv" || first.CreatedAt.IsZero() {
		t.Fatalf("add: %v %+v", err, first)
	}
	_, added := load()

	again, err := c.AddFile(ctx, p, &stale, fileID)
	if err != nil {
		t.Fatalf("add again, loaded before the first add: %v", err)
	}
	same("added again, loaded before the first add", again, first)
	s, _ = load()
	again, err = c.AddFile(ctx, p, &s, fileID)
	if err != nil {
		t.Fatalf("add again: %v", err)
	}
	same("added again", again, first)
	if _, now := load(); now != added {
		t.Errorf("adding a file held already appended: the container is at %d, was %d", now, added)
	}
}
