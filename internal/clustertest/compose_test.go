package clustertest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/contrailhq/contrail/internal/clustertest"
)

// composeFile is the part of docker-compose.yml the test reads (anchors and merge keys resolved by the parser).
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	Command     string            `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	// DependsOn is a list of services (started, not necessarily healthy) or a map of them to a condition.
	DependsOn   any `yaml:"depends_on"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// TestComposeFile checks what docker cannot be run here to show: the NATS image is the nats-server version go.mod
// embeds (what the tests run), Contrail starts only once every NATS server is healthy, the signing secret and the
// admin key are required, and the servers form one cluster the nodes list whole.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	root, err := clustertest.ModuleRoot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cf composeFile
	if err := yaml.Unmarshal(raw, &cf); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	version := requiredVersion(t, filepath.Join(root, "go.mod"), clustertest.NATSServerModule)

	var natsServices, contrailServices []string
	for name, s := range cf.Services {
		switch {
		case strings.HasPrefix(s.Image, "nats:"):
			natsServices = append(natsServices, name)
		case s.Build != nil:
			contrailServices = append(contrailServices, name)
		default:
			t.Errorf("service %s is neither a nats-server nor a Contrail node", name)
		}
	}
	slices.Sort(natsServices)
	slices.Sort(contrailServices)
	if len(natsServices) != 3 || len(contrailServices) != 2 {
		t.Fatalf("want 3 nats-servers and 2 Contrail nodes, have %v and %v", natsServices, contrailServices)
	}

	clusterNames := map[string]bool{}
	for _, name := range natsServices {
		s := cf.Services[name]
		if want := "nats:" + strings.TrimPrefix(version, "v") + "-alpine"; s.Image != want {
			t.Errorf("%s runs %s; go.mod embeds nats-server %s, so it should run %s", name, s.Image, version, want)
		}
		flags := flagsOf(s.Command)
		if _, ok := flags["--jetstream"]; !ok {
			t.Errorf("%s: JetStream is off: %s", name, s.Command)
		}
		clusterNames[flags["--cluster_name"]] = true
		for _, other := range natsServices {
			if other != name && !strings.Contains(flags["--routes"], "nats-route://"+other+":") {
				t.Errorf("%s: --routes %q does not name %s", name, flags["--routes"], other)
			}
		}
		probe := strings.Join(s.Healthcheck.Test, " ")
		if !strings.Contains(probe, "127.0.0.1:"+flags["--http_port"]+"/healthz?js-enabled-only=true") {
			t.Errorf("%s: the health check %q does not ask the monitoring port %q whether JetStream is enabled", name, probe, flags["--http_port"])
		}
	}
	if len(clusterNames) != 1 || clusterNames[""] {
		t.Errorf("the nats-servers name clusters %v: they must name one", clusterNames)
	}

	required := regexp.MustCompile(`^\$\{(CONTRAIL_[A-Z_]+):\?[^}]+\}$`)
	for _, name := range contrailServices {
		s := cf.Services[name]
		conditions := dependsOn(s.DependsOn)
		for _, n := range natsServices {
			if c := conditions[n]; c != "service_healthy" {
				t.Errorf("%s depends on %s with condition %q: it must wait until it is healthy", name, n, c)
			}
		}
		for _, v := range []string{"CONTRAIL_SIGNING_SECRET", "CONTRAIL_ADMIN_KEY"} {
			if m := required.FindStringSubmatch(s.Environment[v]); m == nil || m[1] != v {
				t.Errorf("%s: %s is %q: compose must refuse to start without it (${%s:?...})", name, v, s.Environment[v], v)
			}
		}
		urls := s.Environment["CONTRAIL_NATS_URL"]
		for _, n := range natsServices {
			if !strings.Contains(urls, "nats://"+n+":4222") {
				t.Errorf("%s: CONTRAIL_NATS_URL %q does not list %s", name, urls, n)
			}
		}
		if !strings.Contains(strings.Join(s.Healthcheck.Test, " "), "health") {
			t.Errorf("%s has no health check: %v", name, s.Healthcheck.Test)
		}
	}
}

// dependsOn maps each service depended on to its condition, in either of compose's forms (a bare list means
// service_started).
func dependsOn(v any) map[string]string {
	out := map[string]string{}
	switch d := v.(type) {
	case []any:
		for _, s := range d {
			out[fmt.Sprint(s)] = "service_started"
		}
	case map[string]any:
		for s, spec := range d {
			m, _ := spec.(map[string]any)
			out[s], _ = m["condition"].(string)
		}
	}
	return out
}

// flagsOf splits a command line of --flag value pairs (a flag without a value maps to "").
func flagsOf(cmd string) map[string]string {
	out := map[string]string{}
	fields := strings.Fields(cmd)
	for i, f := range fields {
		if !strings.HasPrefix(f, "-") {
			continue
		}
		out[f] = ""
		if i+1 < len(fields) && !strings.HasPrefix(fields[i+1], "-") {
			out[f] = fields[i+1]
		}
	}
	return out
}

// requiredVersion is the version go.mod requires of a module.
func requiredVersion(t *testing.T, gomod, module string) string {
	t.Helper()
	raw, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == module {
			return f[1]
		}
	}
	t.Fatalf("go.mod requires no %s", module)
	return ""
}
