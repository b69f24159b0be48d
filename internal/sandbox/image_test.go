package sandbox

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDockerImageHasTheSandbox: the image runs what `make run` runs, so its last stage installs every package
// mk/sandbox.mk installs for the sandbox, and carries the use-lite weights `make run` fetches.
func TestDockerImageHasTheSandbox(t *testing.T) {
	mk, err := os.ReadFile("../../mk/sandbox.mk")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^SANDBOX_PACKAGES = (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("mk/sandbox.mk sets no SANDBOX_PACKAGES")
	}
	docker, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	stages := strings.Split(string(docker), "\nFROM ")
	last := stages[len(stages)-1]
	installed := map[string]bool{}
	for _, run := range regexp.MustCompile(`(?s)apt-get install ([^&]+)`).FindAllStringSubmatch(last, -1) {
		for _, f := range strings.Fields(strings.ReplaceAll(run[1], "\\", " ")) {
			installed[f] = true
		}
	}
	for _, pkg := range strings.Fields(string(m[1])) {
		if !installed[pkg] {
			t.Errorf("the image's last stage does not install %s (mk/sandbox.mk installs it)", pkg)
		}
	}
	if !regexp.MustCompile(`COPY --from=\S+ \S*/use-lite (\S+)`).MatchString(last) ||
		!strings.Contains(last, "CONTRAIL_MODELS_DIR=") {
		t.Errorf("the image carries no use-lite weights in its models dir:\n%s", last)
	}
}
