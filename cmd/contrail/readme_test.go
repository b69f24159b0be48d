package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The README is what a new user runs first: these tests run its commands as written, against a real node.

const readmePath = "../../README.md"

// readmeSection returns the README's text from a "## " heading to the next one.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n## "+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no section %q", heading)
	}
	s = s[i+1:]
	if j := strings.Index(s[3:], "\n## "); j >= 0 {
		s = s[:j+3]
	}
	return s
}

// codeBlock returns the first fenced block of a language in a section.
func codeBlock(t *testing.T, section, lang string) string {
	t.Helper()
	m := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatalf("no ```%s block in:\n%s", lang, section)
	}
	return m[1]
}

// atNode points text written for the default address at a test node.
func atNode(text string, n *node) string {
	host := strings.TrimPrefix(n.url, "http://")
	return strings.NewReplacer("localhost:8080", host, "127.0.0.1:8080", host).Replace(text)
}

// The "Trying it" commands, pasted into bash in a checkout after `make run`: the session handle travels from one
// command to the next, and the calculator answers through the front agent.
func TestREADMETryingItRunsAsPasted(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make deps installs it): cannot run the README's commands", tool)
		}
	}
	script := codeBlock(t, readmeSection(t, "Trying it"), "sh")
	dataDir := t.TempDir()
	n := startNode(t, dataDir, "--sample-agents")
	waitReady(t, n)

	// The checkout as the commands expect it: bin/contrail and contrail-data beside each other.
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"bin/contrail": binary, "contrail-data": dataDir} {
		if err := os.Symlink(target, filepath.Join(work, link)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", atNode(script, n))
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "CONTRAIL_URL="+n.url, "CONTRAIL_API_KEY=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the README's commands failed: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{"calc", "picks this one", "84", "session.message_posted",
		"100 divided by 8 is 12.5", "fixie> The random number is", "#chart", "with fixie"} {
		if !strings.Contains(got, want) {
			t.Errorf("the README's commands did not print %q:\n%s", want, got)
		}
	}
	// The replayed query names the reply it will have, and that is the reply the timeline shows next.
	m := regexp.MustCompile(`reply will be (msg_\w+)`).FindStringSubmatch(got)
	if m == nil || !strings.Contains(got, "["+m[1]+"]") {
		t.Errorf("the replay's reply IDs do not match:\n%s", got)
	}
}

// A second `make run` as the README shows it gets the port, data dir and NATS setting it names.
func TestREADMESecondMakeRun(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	line := regexp.MustCompile("(?m)^make run ([A-Z_]+=.+)$").FindStringSubmatch(readmeSection(t, "Three commands"))
	if line == nil {
		t.Fatal("the README shows no second `make run`")
	}
	cmd := exec.Command("make", append([]string{"-n", "run"}, strings.Fields(line[1])...)...)
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n run %s: %v\n%s", line[1], err, out)
	}
	serve := strings.ReplaceAll(string(out), "\\\n", " ")
	for _, want := range []string{"--addr 127.0.0.1:8081", "--data-dir ./contrail-data-2", "--nats-listen off"} {
		if !strings.Contains(serve, want) {
			t.Errorf("make run %s does not pass %s:\n%s", line[1], want, out)
		}
	}
}

// The Go program compiles in a module of its own, made as the README says (with the module version it names),
// and runs against a node.
func TestREADMEGoProgramCompilesAndRuns(t *testing.T) {
	t.Parallel()
	section := readmeSection(t, "OpenAI's Assistants API")
	program := codeBlock(t, section, "go")
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`go get (github\.com/openai/openai-go/v3)@(v[0-9.]+)`).FindStringSubmatch(section)
	if m == nil {
		t.Fatalf("the README does not say which openai-go to get:\n%s", section)
	}
	if !strings.Contains(string(gomod), m[1]+" "+m[2]+"\n") {
		t.Fatalf("the README gets %s@%s; go.mod tests %s", m[1], m[2], regexp.MustCompile(`github\.com/openai/openai-go/v3 \S+`).Find(gomod))
	}
	// The module `go mod init example && go get` makes; go.sum comes from this repository, which uses the same
	// version, so that no download is needed beyond the ones the repository's own build made.
	dir := t.TempDir()
	sum, err := os.ReadFile("../../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod":  "module example\n\ngo 1.26\n\nrequire " + m[1] + " " + m[2] + "\n",
		"go.sum":  string(sum),
		"main.go": program,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goBuild := func() ([]byte, error) {
		build := exec.Command("go", "build", "-o", "example", ".")
		build.Dir = dir
		build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		return build.CombinedOutput()
	}
	if out, err := goBuild(); err != nil {
		t.Fatalf("the README's Go program does not compile: %v\n%s\n%s", err, out, program)
	}

	n := startNode(t, t.TempDir())
	// The program's base URL is the default address; the node under test is elsewhere.
	if !strings.Contains(program, `"http://127.0.0.1:8080/v1/"`) {
		t.Fatalf("the program does not use the default address")
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(atNode(program, n)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := goBuild(); err != nil {
		t.Fatalf("rebuild at the node's address: %v\n%s", err, out)
	}
	example := exec.Command(filepath.Join(dir, "example"))
	example.Env = append(os.Environ(), "CONTRAIL_API_KEY="+n.adminKey(t))
	out, err := example.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "run completed: ") || !strings.Contains(string(out), "offline model") {
		t.Fatalf("the README's Go program against a node: %v\n%s", err, out)
	}
}

// Every serve flag is in the README's table with its environment twin, and the CLI section names every command.
func TestREADMEDocumentsEveryServeFlagAndCommand(t *testing.T) {
	t.Parallel()
	table := readmeSection(t, "Running it")
	serve := newServeCmd()
	for _, name := range serveFlags(serve) {
		twin := serve.Flags().Lookup(name).Annotations[envTwinKey][0]
		row := "| `--" + name + "` | `" + twin + "` |"
		if !strings.Contains(table, row) {
			t.Errorf("the README's serve table has no row %q", row)
		}
	}
	cli := readmeSection(t, "The CLI")
	for _, c := range newRoot().Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if !strings.Contains(cli, "bin/contrail "+c.Name()) {
			t.Errorf("the README's CLI section does not name `bin/contrail %s`", c.Name())
		}
	}
}

// A plain `make` builds the binary and fetches nothing (the weights come with `make run`, `make test`).
func TestPlainMakeOnlyBuilds(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command("make", "-n")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "go build") || strings.Contains(string(out), "fetch-use-lite") || strings.Contains(string(out), "npm") {
		t.Fatalf("a plain make should only build:\n%s", out)
	}
}

// The "Julep's tasks" commands, pasted into bash as "Trying it" is: the execution waits, is resumed, ends with 42,
// and its timeline prints.
func TestREADMETasksRunAsPasted(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make deps installs it): cannot run the README's commands", tool)
		}
	}
	script := codeBlock(t, readmeSection(t, "Julep's tasks"), "sh")
	dataDir := t.TempDir()
	n := startNode(t, dataDir)
	waitReady(t, n)
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binary, filepath.Join(work, "bin/contrail")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", atNode(script, n))
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "CONTRAIL_URL="+n.url, "CONTRAIL_API_KEY="+n.adminKey(t))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the README's commands failed: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{`{"n":42}`, "resume", "finish", "5 transitions in"} {
		if !strings.Contains(got, want) {
			t.Errorf("the README's commands did not print %q:\n%s", want, got)
		}
	}
}

// The Responses section: its curl commands as pasted, then its two Node programs with the npm packages the
// Responses compatibility test installs (internal/openaiapi/testdata/agents), against a node with the offline model.
func TestREADMEResponsesRunAsPasted(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make deps installs it): cannot run the README's commands", tool)
		}
	}
	section := readmeSection(t, "OpenAI's Responses API and the Agents SDK")
	n := startNode(t, t.TempDir())
	waitReady(t, n)
	key := n.adminKey(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(name string, cmd *exec.Cmd) string {
		cmd.Env = append(os.Environ(), "CONTRAIL_API_KEY="+key)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("the README's %s failed: %v\n%s", name, err, out.String())
		}
		return out.String()
	}
	got := run("curl commands", exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", atNode(codeBlock(t, section, "sh"), n)))
	for _, want := range []string{"offline model", "completed", "event: response.created", "event: response.completed"} {
		if !strings.Contains(got, want) {
			t.Errorf("the README's curl commands did not print %q:\n%s", want, got)
		}
	}

	dir := "../../internal/openaiapi/testdata/agents"
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the README's Node programs cannot run")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@openai", "agents", "package.json")); err != nil {
		t.Skipf("the npm packages are not installed in %s (make deps installs them)", dir)
	}
	blocks := regexp.MustCompile("(?s)```js\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) != 3 {
		t.Fatalf("want three Node programs in the section, found %d", len(blocks))
	}
	for i, want := range []string{"completed resp_", "conversation conv_", "completed over a socket: resp_"} {
		// Node finds the packages from where the script is: it is written beside them for the run.
		script := filepath.Join(dir, "readme-"+strings.ReplaceAll(t.Name(), "/", "-")+string(rune('a'+i))+".mjs")
		if err := os.WriteFile(script, []byte(atNode(blocks[i][1], n)), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(script) })
		got := run("Node program", exec.CommandContext(ctx, "node", script))
		if !strings.Contains(got, want) {
			t.Errorf("the README's Node program %d did not print %q:\n%s", i+1, want, got)
		}
	}
}
