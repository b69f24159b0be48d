// Package uselitetest finds the Universal Sentence Encoder Lite weights for tests, and skips a test that needs
// them, saying why, when they are absent. It is imported only by tests.
package uselitetest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/embedding/uselite"
)

// ModelsDirEnv names the models directory (the one holding use-lite/); mk/models.mk sets it. Without it the
// default of `make models`, contrail-data/models at the module root, is used.
const ModelsDirEnv = "CONTRAIL_TEST_MODELS_DIR"

// Dir returns the directory of the unpacked weights, or skips the test.
func Dir(t testing.TB) string {
	t.Helper()
	models := os.Getenv(ModelsDirEnv)
	if models == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Skipf("use-lite weights: %v", err)
		}
		models = filepath.Join(root, "contrail-data", "models")
	}
	dir := filepath.Join(models, "use-lite")
	if _, err := os.Stat(filepath.Join(dir, "model.json")); err != nil {
		reason := "run `make models` to fetch them"
		if b, err := os.ReadFile(filepath.Join(models, "use-lite.unavailable")); err == nil {
			reason = "`make models` could not fetch them: " + strings.TrimSpace(string(b))
		}
		t.Skipf("use-lite weights not found in %s: %s", dir, reason)
	}
	return dir
}

// Model loads the model, or skips the test when the weights are absent.
func Model(t testing.TB) *uselite.Model {
	t.Helper()
	m, err := uselite.Load(Dir(t))
	if err != nil {
		t.Fatalf("load use-lite: %v", err)
	}
	return m
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
