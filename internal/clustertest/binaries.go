package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// NATSServerModule is the module the nats-server binary is built from: the version go.mod requires is the one
// Contrail embeds, tests and pins in docker-compose.yml.
const NATSServerModule = "github.com/nats-io/nats-server/v2"

// Binaries are the programs the topology runs, built from this module.
type Binaries struct {
	NATSServer string
	Contrail   string
	// NATSVersion is the nats-server version go.mod requires ("v2.15.2"), which the built binary reports.
	NATSVersion string
}

// Build compiles nats-server (at the version go.mod requires, from the module cache) and contrail into dir, and
// checks that the nats-server binary is the version go.mod names.
func Build(ctx context.Context, dir string) (Binaries, error) {
	goTool, err := goCommand()
	if err != nil {
		return Binaries{}, err
	}
	root, err := ModuleRoot(ctx)
	if err != nil {
		return Binaries{}, err
	}
	version, err := run(ctx, root, goTool, "list", "-m", "-f", "{{.Version}}", NATSServerModule)
	if err != nil {
		return Binaries{}, fmt.Errorf("find the nats-server version go.mod requires: %w", err)
	}
	// One go build for both: the two link in parallel and share the build cache with the rest of the tests. No
	// -race: the nodes are measured as they are deployed, and five race-instrumented processes would not fit on
	// a small machine.
	if _, err := run(ctx, root, goTool, "build", "-o", dir+string(filepath.Separator), "./cmd/contrail", NATSServerModule); err != nil {
		return Binaries{}, fmt.Errorf("build contrail and nats-server: %w", err)
	}
	b := Binaries{NATSServer: filepath.Join(dir, "nats-server"), Contrail: filepath.Join(dir, "contrail"), NATSVersion: version}
	got, err := run(ctx, dir, b.NATSServer, "--version")
	if err != nil {
		return Binaries{}, fmt.Errorf("ask nats-server its version: %w", err)
	}
	if !strings.HasSuffix(got, " "+version) {
		return Binaries{}, fmt.Errorf("nats-server built from %s@%s reports %q", NATSServerModule, version, got)
	}
	return b, nil
}

// ModuleRoot is the directory of this module's go.mod.
func ModuleRoot(ctx context.Context) (string, error) {
	goTool, err := goCommand()
	if err != nil {
		return "", err
	}
	gomod, err := run(ctx, "", goTool, "env", "GOMOD")
	if err != nil {
		return "", fmt.Errorf("find go.mod: %w", err)
	}
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("find go.mod: not inside the module")
	}
	return filepath.Dir(gomod), nil
}

// goCommand finds the go tool: the one on PATH, else the one of the toolchain that built this test.
func goCommand() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no go tool on PATH nor in %s", filepath.Dir(p))
	}
	return p, nil
}

// run runs a command and returns its trimmed output, or an error carrying what it printed.
func run(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return strings.TrimSpace(out.String()), nil
}
