package jinja

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/parser"

	"github.com/contrailhq/contrail/internal/errs"
)

// Limits bound one rendering.
type Limits struct {
	// MaxBytes bounds the rendered text and every string or list a template builds (in bytes of text).
	MaxBytes int
	// MaxItems bounds the length of a list a template builds (range, concatenation, batch).
	MaxItems int
	// MaxOps bounds the operations of one rendering: tags executed, operators, filters, writes.
	MaxOps int
	// Timeout bounds the wall time of one rendering.
	Timeout time.Duration
}

// DefaultLimits are generous for a system prompt with its documents, small for a server.
func DefaultLimits() Limits {
	return Limits{MaxBytes: 4 << 20, MaxItems: 100_000, MaxOps: 1_000_000, Timeout: 2 * time.Second}
}

// MaxSourceBytes bounds the source of a template.
const MaxSourceBytes = 256 << 10

// Template is a compiled template; it may be rendered many times, concurrently.
type Template struct {
	name   string
	tpl    *exec.Template
	limits Limits
}

// Option changes how a template is compiled or rendered.
type Option func(*Template)

// WithLimits replaces the default limits.
func WithLimits(l Limits) Option { return func(t *Template) { t.limits = l } }

// Compile parses source. name says what the template is ("system_template", "main[1].prompt") in errors.
func Compile(name, source string, opts ...Option) (*Template, error) {
	t := &Template{name: name, limits: DefaultLimits()}
	for _, o := range opts {
		o(t)
	}
	if len(source) > MaxSourceBytes {
		return nil, t.fail(0, fmt.Sprintf("the template is %d bytes, more than the %d allowed", len(source), MaxSourceBytes))
	}
	tpl, err := exec.NewTemplate(name, templateConfig(), sourceLoader{name: name, source: source}, environment())
	if err != nil {
		return nil, t.parseError(err)
	}
	if err := guardTemplate(tpl.Root()); err != nil {
		return nil, t.fail(0, err.Error())
	}
	t.tpl = tpl
	return t, nil
}

// Render renders the template with vars. Values are normalised first: structs and typed maps become what their
// JSON is, and whole floats become ints, as Julep's Python would print them.
func (t *Template) Render(ctx context.Context, vars map[string]any) (out string, err error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	g := newGuard(ctx, t.limits)
	data := make(map[string]any, len(vars)+1)
	for k, v := range vars {
		data[k] = Normalize(v)
	}
	data[guardVar] = g
	defer func() {
		// gonja is a tree-walking interpreter over reflection; a bug in it must fail this rendering, not the node.
		if r := recover(); r != nil {
			out, err = "", t.fail(0, fmt.Sprintf("the template could not be rendered: %v", r))
		}
	}()
	var buf bytes.Buffer
	w := &limitedWriter{w: &buf, g: g}
	if err := t.tpl.Execute(w, exec.NewContext(data)); err != nil {
		if g.ctxErr != nil {
			return "", g.ctxErr
		}
		return "", t.renderError(err, vars)
	}
	return buf.String(), nil
}

// Render compiles source and renders it once.
func Render(ctx context.Context, name, source string, vars map[string]any, opts ...Option) (string, error) {
	t, err := Compile(name, source, opts...)
	if err != nil {
		return "", err
	}
	return t.Render(ctx, vars)
}

// IsTemplate reports whether s holds Jinja markup ({{ or {%), that is, whether rendering could change it.
func IsTemplate(s string) bool {
	return strings.Contains(s, "{{") || strings.Contains(s, "{%") || strings.Contains(s, "{#")
}

func templateConfig() *config.Config {
	c := config.New()
	// Julep renders with jinja2's ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, autoescape=False).
	c.TrimBlocks = true
	c.LeftStripBlocks = true
	c.AutoEscape = false
	c.StrictUndefined = false
	return c
}

// sourceLoader serves the one template and refuses every other name, so nothing outside the source is read.
type sourceLoader struct{ name, source string }

func (l sourceLoader) Read(path string) (io.Reader, error) {
	if path != l.name {
		return nil, fmt.Errorf("templates cannot load other templates (%q)", path)
	}
	return strings.NewReader(l.source), nil
}

func (l sourceLoader) Resolve(path string) (string, error) {
	if path != l.name {
		return "", fmt.Errorf("templates cannot load other templates (%q)", path)
	}
	return path, nil
}

func (l sourceLoader) Inherit(string) (loaders.Loader, error) { return l, nil }

func (t *Template) fail(line int, msg string) *errs.Error {
	where := "template"
	if t.name != "" {
		where += " " + t.name
	}
	if line > 0 {
		where += fmt.Sprintf(", line %d", line)
	}
	return &errs.Error{Code: errs.Invalid, Field: t.name, Message: where + ": " + msg}
}

func (t *Template) parseError(err error) error {
	var se *parser.SyntaxError
	if errors.As(err, &se) {
		msg := se.Message
		if se.Raw != "" {
			msg += fmt.Sprintf(" (near %q)", se.Raw)
		}
		return t.fail(se.Line, msg)
	}
	// gonja's message quotes the whole source; keep only the cause.
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
		err = u
	}
	line, msg := lineOf(err.Error())
	return t.fail(line, msg)
}

var lineRE = regexp.MustCompile(`(?i)(?:at )?line:? (\d+)(?: col:? \d+)?[,:]? ?`)

// lineOf finds the innermost "line N" gonja wrote in an error chain and returns it with what follows it.
func lineOf(msg string) (int, string) {
	locs := lineRE.FindAllStringSubmatchIndex(msg, -1)
	if len(locs) == 0 {
		return 0, msg
	}
	last := locs[len(locs)-1]
	n, _ := strconv.Atoi(msg[last[2]:last[3]])
	rest := strings.TrimSpace(msg[last[1]:])
	if rest == "" {
		rest = strings.TrimSpace(msg[:last[0]])
	}
	return n, rest
}

func (t *Template) renderError(err error, vars map[string]any) error {
	full := err.Error()
	line, _ := lineOf(full)
	if i := strings.LastIndex(full, limitMarker); i >= 0 {
		return t.fail(line, firstClause(full[i+len(limitMarker):]))
	}
	if i := strings.LastIndex(full, zeroMarker); i >= 0 {
		msg := "division by zero in " + firstClause(full[i+len(zeroMarker):])
		if names := unsupportedTools(vars); names != "" {
			// Julep's default template divides by zero on purpose for the tools it cannot describe.
			msg += ": the template refuses " + names
		}
		return t.fail(line, msg)
	}
	_, msg := lineOf(callNoise.ReplaceAllString(full, ""))
	return t.fail(line, strings.TrimPrefix(msg, "unable to execute template: "))
}

// callNoise is what gonja prints for the calls the guard put around expressions.
var callNoise = regexp.MustCompile(`call\(\[.*?\], map\[\]\): unable to evaluate parameters: (?:invalid call to function '__contrail_\w+': )?|unable to evaluate filter &\{<Token.*?map\[\]\}: `)

// firstClause cuts what gonja appended after an error it wrapped.
func firstClause(s string) string {
	if i := strings.Index(s, ": "); i >= 0 && strings.HasPrefix(s[i:], ": Unable") {
		return s[:i]
	}
	return s
}

// unsupportedTools names the tools whose type is not "function", which is what Julep's default template refuses.
func unsupportedTools(vars map[string]any) string {
	tools, ok := Normalize(vars["tools"]).([]any)
	if !ok {
		return ""
	}
	var names []string
	for _, tl := range tools {
		m, ok := tl.(map[string]any)
		if !ok {
			continue
		}
		typ, _ := m["type"].(string)
		if typ == "function" {
			continue
		}
		name, _ := m["name"].(string)
		if name == "" {
			name = "(unnamed)"
		}
		if typ == "" {
			typ = "(none)"
		}
		names = append(names, fmt.Sprintf("tool %q of type %q", name, typ))
	}
	if len(names) == 0 {
		return ""
	}
	return strings.Join(names, ", ") + " (only function tools are supported by it)"
}
