package graph_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"
)

// TestGeneratedCodeIsCurrent generates the schema's code afresh beside graph/generated (in a directory the go tool
// ignores) and compares: a schema or gqlgen.yml change without `make generate` fails here.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("generation takes seconds")
	}
	dir, err := os.MkdirTemp(".", "_gencheck")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	cfg, err := config.LoadConfig("gqlgen.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Exec.Filename = filepath.Join(dir, "exec.go")
	cfg.Model.Filename = filepath.Join(dir, "models.go")
	cfg.SkipValidation = true
	if err := api.Generate(cfg); err != nil {
		t.Fatalf("generate: %v", err)
	}
	for _, name := range []string{"exec.go", "models.go"} {
		fresh, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		// gqlgen spells the package's import path into some function names; only that may differ.
		fresh = bytes.ReplaceAll(fresh, []byte("ᚋ"+filepath.Base(dir)+"ᚐ"), []byte("ᚋgeneratedᚐ"))
		committed, err := os.ReadFile(filepath.Join("generated", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh, committed) {
			t.Errorf("graph/generated/%s is not what the schema generates: run `make generate`", name)
		}
	}
}
