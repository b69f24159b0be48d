package layers

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/contrailhq/contrail/"

// faces are the packages that answer HTTP: they call commands for writes and read models for reads.
var faces = []string{"graph", "graph/...", "internal/httpapi", "internal/openaiapi", "internal/julepapi",
	"internal/fixieapi", "internal/adminapi", "internal/console", "internal/userstorage", "internal/responsesapi",
	"internal/mcp/server"}

// rule is one line of "What may import what": the packages it covers (a path, or a path ending in /... for it and
// everything under it), and either the only packages of this module they may import or those they must not.
type rule struct {
	covers string
	only   []string
	never  []string
	// noNATS: nothing they depend on, however indirectly, is of NATS.
	noNATS bool
}

var rules = []rule{
	{covers: "events", only: []string{}, noNATS: true},
	{covers: "domain/...", only: []string{"events", "internal/errs", "domain/...",
		// the task language, which is pure (domain/execution)
		"internal/workflow"}, noNATS: true},
	{covers: "eventstore", only: []string{"events", "internal/natsx", "internal/errs", "internal/metrics"}},
	{covers: "internal/auth", only: []string{"events", "internal/errs", "internal/natsx"}},
	{covers: "internal/commands", never: append([]string{"handlers/...", "internal/platform/..."}, faces...)},
	{covers: "handlers/...", never: append([]string{"internal/commands", "projections", "internal/platform/..."}, faces...)},
	// the turn machinery the run worker and the responder share: pure rules over the events and the model's types,
	// so that neither loop's aggregate, store or NATS leaks into the other through it (errs, pure as well, tells a
	// file a model is not shown from a store's failure)
	{covers: "handlers/turn", only: []string{"events", "internal/llm", "internal/errs"}, noNATS: true},
	{covers: "projections", never: append([]string{"handlers/...", "internal/commands", "internal/platform/..."}, faces...)},
	{covers: "internal/limits", never: []string{"projections", "internal/commands", "handlers/..."}},
	{covers: "internal/agents", never: []string{"projections", "internal/commands", "handlers/..."}},
	{covers: "internal/deadletter", never: []string{"handlers/...", "internal/commands", "projections"}},
}

func init() {
	for _, f := range faces {
		rules = append(rules, rule{covers: f, never: []string{"handlers/...", "internal/platform/..."}})
	}
}

// matches reports whether pkg (relative to the module) is named by pattern.
func matches(pattern, pkg string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

func matchesAny(patterns []string, pkg string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(p, pkg) })
}

// goList runs `go list` from the module's root with a template that prints one package a line.
func goList(t *testing.T, args ...string) [][]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var lines [][]string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, strings.Fields(sc.Text()))
	}
	return lines
}

// TestImportsFollowTheRules walks every package's imports (tests' own imports aside) and fails on each arrow the
// rules forbid, naming it and the rule.
func TestImportsFollowTheRules(t *testing.T) {
	var bad []string
	checked := map[string]bool{}
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...") {
		pkg, ok := strings.CutPrefix(line[0], module)
		if !ok {
			continue
		}
		for _, r := range rules {
			if !matches(r.covers, pkg) {
				continue
			}
			checked[r.covers] = true
			for _, imp := range line[1:] {
				dep, ok := strings.CutPrefix(imp, module)
				if !ok {
					continue
				}
				if r.only != nil && !matchesAny(r.only, dep) {
					bad = append(bad, fmt.Sprintf("%s -> %s: %s may import only %v", pkg, dep, r.covers, r.only))
				}
				if matchesAny(r.never, dep) {
					bad = append(bad, fmt.Sprintf("%s -> %s: %s must not import %s", pkg, dep, r.covers, dep))
				}
			}
		}
	}
	for _, r := range rules {
		// A rule that covers no package is a rule about a package that was renamed or removed: say so, unless it
		// is a face still to come.
		if !checked[r.covers] && !slices.Contains(faces, r.covers) {
			bad = append(bad, fmt.Sprintf("rule for %s covers no package", r.covers))
		}
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestTheVocabularyAndTheDomainDependOnNoNATS checks that nothing the domain or the events vocabulary depends on,
// however indirectly, is of NATS: the store is eventstore's.
func TestTheVocabularyAndTheDomainDependOnNoNATS(t *testing.T) {
	for _, r := range rules {
		if !r.noNATS {
			continue
		}
		target := "./" + r.covers
		for _, line := range goList(t, "-deps", "-f", "{{.ImportPath}}", target) {
			if strings.Contains(line[0], "nats-io") {
				t.Errorf("%s depends on %s", r.covers, line[0])
			}
		}
	}
}

func TestTheRulesMatchWhatTheyName(t *testing.T) {
	for _, c := range []struct {
		pattern, pkg string
		want         bool
	}{
		{"domain/...", "domain", true},
		{"domain/...", "domain/session", true},
		{"domain/...", "domainx", false},
		{"events", "eventstore", false},
		{"internal/commands", "internal/commands", true},
	} {
		if got := matches(c.pattern, c.pkg); got != c.want {
			t.Errorf("matches(%q, %q) = %v, want %v", c.pattern, c.pkg, got, c.want)
		}
	}
}

// TestFacesTakeNoCommandType checks what the Commands section says: a face declares the methods it calls as an
// interface of its own and holds no *commands.X.
func TestFacesTakeNoCommandType(t *testing.T) {
	concrete := regexp.MustCompile(`\*commands\.[A-Z]\w*`)
	for _, line := range goList(t, "-f", "{{.Dir}} {{.ImportPath}} {{join .GoFiles \" \"}}", "./...") {
		pkg, _ := strings.CutPrefix(line[1], module)
		if !matchesAny(faces, pkg) {
			continue
		}
		for _, name := range line[2:] {
			src, err := os.ReadFile(filepath.Join(line[0], name))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range concrete.FindAll(src, -1) {
				t.Errorf("%s/%s takes %s: declare the methods it calls as an interface of the face", pkg, name, m)
			}
		}
	}
}
